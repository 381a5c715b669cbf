// Readers lend elements at any byte address (Reader::view: a DCP chunk after an odd-length torch.save archive, a
// packed Caffe field), so every CPU kernel takes its inputs and its base at any address. Each kernel runs on the
// same values copied to byte offsets 0 (aligned for every dtype), 1, 2, 3 and 4 of their buffers and must give the
// aligned run's bytes. The values are small integers, exact in every float dtype, so sums, distances, products and
// order statistics are exact too and are checked against closed forms computed here. The sanitizer build
// (-fsanitize=alignment) turns any aligned load from such an address into a failure.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "wavg/backend.hpp"
#include "wavg/dispatch_float.hpp"
#include "wavg/dtype.hpp"
#include "wavg/element_math.hpp"

using namespace wavg;

namespace {

constexpr std::size_t k_n = 5;                                // inputs: an odd N, so the median is one of them
constexpr std::uint64_t k_count = 3 * k_reduce_chunk + 1237;  // several chunks, a ragged tail, OpenMP on
constexpr DType k_dtypes[] = {DType::f16, DType::bf16, DType::f32, DType::f64};

double input_value(std::size_t k, std::uint64_t i) {
  return static_cast<double>(static_cast<int>((7 * i + 3 * k) % 11) - 5);
}
double base_value(std::uint64_t i) { return static_cast<double>(static_cast<int>(i % 3) - 1); }

// k_n inputs and a base of one dtype, each starting `shift` bytes into a buffer that is aligned for any dtype.
struct Shifted {
  Shifted(DType t, std::size_t shift) : dtype(t) {
    const std::size_t bytes = k_count * dtype_size(t);
    for (std::size_t k = 0; k <= k_n; ++k) {
      std::vector<double> aligned(k_count);
      dispatch_float(t, [&]<DType T>() {
        for (std::uint64_t i = 0; i < k_count; ++i)
          store<T>(aligned.data(), i, k < k_n ? input_value(k, i) : base_value(i));
      });
      buffers.emplace_back(bytes / sizeof(double) + 2);
      std::memcpy(reinterpret_cast<unsigned char*>(buffers.back().data()) + shift, aligned.data(), bytes);
    }
    for (const auto& b : buffers) pointers.push_back(reinterpret_cast<const unsigned char*>(b.data()) + shift);
  }
  BlockInputs block(bool with_base) const {
    return {dtype, k_count, std::span<const void* const>(pointers.data(), k_n), with_base ? pointers[k_n] : nullptr};
  }
  DType dtype;
  std::vector<std::vector<double>> buffers;
  std::vector<const void*> pointers;  // the inputs, then the base
};

template <class T>
void append(std::vector<unsigned char>& out, const T* p, std::size_t count) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  out.insert(out.end(), b, b + count * sizeof(T));
}

// Every kernel that reads input elements, its outputs' bytes one after the other.
std::vector<unsigned char> run_every_kernel(Backend& cpu, const Shifted& s) {
  std::vector<unsigned char> all;
  const BlockInputs plain = s.block(false), based = s.block(true);
  const std::vector<double> weights{1, 2, 0.5, 1, 4}, ones(k_n, 1.0), threes(k_n, 3.0);
  for (const DType out_dtype : {s.dtype, DType::f64}) {
    std::vector<double> out(k_count);
    cpu.weighted_sum(plain, weights, 8.5, out_dtype, out.data());
    append(all, reinterpret_cast<const unsigned char*>(out.data()), k_count * dtype_size(out_dtype));
  }
  all.push_back(cpu.all_equal(plain));
  std::vector<double> sums(k_n, 0.0), dist(k_n * k_n, 0.0), gram(k_n * k_n, 0.0), l1(2 * k_n, 0.0);
  cpu.update_sum_squares(based, sums.data());
  cpu.update_sq_distances(based, weights.data(), dist.data());
  cpu.update_gram(based, gram.data());
  TaskCombineParams random;
  random.weights = weights.data();
  random.sparsify = Sparsify::random;
  random.density = 0.5;
  random.seed = 11;
  cpu.random_mask_l1(based, random, 100, l1.data());
  for (const auto* v : {&sums, &dist, &gram, &l1}) append(all, v->data(), v->size());
  std::vector<double> values(k_count);
  cpu.update_combine(based, weights.data(), 2.0, values.data());
  append(all, values.data(), k_count);
  for (const auto& [w, stat, trim] :
       {std::tuple{&ones, OrderStat::median, 0u}, std::tuple{&threes, OrderStat::median, 0u},
        std::tuple{&ones, OrderStat::trimmed_mean, 1u}}) {
    cpu.update_order_statistic(based, weights.data(), w->data(), stat, trim, values.data());
    append(all, values.data(), k_count);
  }
  std::vector<std::uint64_t> hist(k_magnitude_buckets, 0);
  cpu.magnitude_histogram(based, 1, hist.data());
  append(all, hist.data(), hist.size());
  std::vector<Magnitude> candidates;
  cpu.magnitude_candidates(based, 2, magnitude_bucket(3.0), 100, candidates);
  std::sort(candidates.begin(), candidates.end(),
            [](const Magnitude& a, const Magnitude& b) { return a.index < b.index; });
  append(all, candidates.data(), candidates.size());
  const std::vector<double> threshold(k_n, 2.0);
  const std::vector<std::uint64_t> tie_last(k_n, 500);
  TaskCombineParams ties;
  ties.weights = weights.data();
  ties.sparsify = Sparsify::magnitude;
  ties.threshold = threshold.data();
  ties.tie_last = tie_last.data();
  ties.consensus = Consensus::sign;
  ties.normalize = Normalize::yes;
  for (const TaskCombineParams* p : {&ties, &random})
    for (const DType out_dtype : {s.dtype, DType::f64}) {
      std::vector<double> out(k_count);
      cpu.task_combine(based, *p, 100, out_dtype, out.data());
      append(all, reinterpret_cast<const unsigned char*>(out.data()), k_count * dtype_size(out_dtype));
    }
  for (const ServerOptKind kind : {ServerOptKind::sgd, ServerOptKind::adam}) {
    ServerStepParams p;
    p.kind = kind;
    p.lr = 0.5;
    std::vector<double> delta(k_count), m(k_count, 0.0), v(k_count, 0.0);
    for (std::uint64_t i = 0; i < k_count; ++i) delta[i] = input_value(0, i);
    for (const DType out_dtype : {s.dtype, DType::f64}) {
      std::vector<double> out(k_count);
      cpu.server_step(p, k_count, delta.data(), s.pointers[k_n], s.dtype, m.data(), v.data(), out_dtype, out.data());
      append(all, reinterpret_cast<const unsigned char*>(out.data()), k_count * dtype_size(out_dtype));
    }
  }
  return all;
}

}  // namespace

TEST_CASE("every CPU kernel gives the aligned run's bytes on inputs at byte offsets 1, 2, 3 and 4") {
  auto cpu = make_cpu_backend();
  for (const DType t : k_dtypes) {
    const auto aligned = run_every_kernel(*cpu, Shifted(t, 0));
    for (const std::size_t shift : {1u, 2u, 3u, 4u}) {
      const auto shifted = run_every_kernel(*cpu, Shifted(t, shift));
      REQUIRE(shifted.size() == aligned.size());
      CHECK_MESSAGE(std::memcmp(shifted.data(), aligned.data(), aligned.size()) == 0, dtype_name(t), " at +", shift);
    }
  }
}

TEST_CASE("kernels on misaligned inputs give the closed-form sums, distances, products and order statistics") {
  auto cpu = make_cpu_backend();
  const std::vector<double> weights{1, 2, 0.5, 1, 4}, ones(k_n, 1.0);
  // The references: plain loops over the values, every partial result an exact small multiple of 1/2.
  std::vector<double> sums(k_n, 0.0), gram(k_n * k_n, 0.0), mean(k_count), combine(k_count), median(k_count);
  for (std::uint64_t i = 0; i < k_count; ++i) {
    double u[k_n], acc = 0, comb = 0;
    for (std::size_t k = 0; k < k_n; ++k) {
      u[k] = input_value(k, i) - base_value(i);
      acc += weights[k] * input_value(k, i);
      comb += weights[k] * u[k];
      sums[k] += u[k] * u[k];
    }
    for (std::size_t j = 0; j < k_n; ++j)
      for (std::size_t l = 0; l < k_n; ++l) gram[j * k_n + l] += u[j] * u[l];
    mean[i] = acc / 8.5;
    combine[i] = comb / 2;
    std::sort(u, u + k_n);
    median[i] = u[k_n / 2];
  }
  for (const DType t : {DType::f32, DType::f64, DType::bf16}) {
    const Shifted s(t, 3);
    std::vector<double> got_sums(k_n, 0.0), got_gram(k_n * k_n, 0.0), out(k_count);
    cpu->update_sum_squares(s.block(true), got_sums.data());
    CHECK(got_sums == sums);
    cpu->update_gram(s.block(true), got_gram.data());
    CHECK(got_gram == gram);
    cpu->weighted_sum(s.block(false), weights, 8.5, DType::f64, out.data());
    CHECK(out == mean);
    cpu->update_combine(s.block(true), weights.data(), 2.0, out.data());
    CHECK(out == combine);
    cpu->update_order_statistic(s.block(true), ones.data(), ones.data(), OrderStat::median, 0, out.data());
    CHECK(out == median);
    std::vector<double> dist(k_n * k_n, 0.0);
    cpu->update_sq_distances(s.block(true), ones.data(), dist.data());
    // |u_j - u_l|^2 = gram_jj + gram_ll - 2 gram_jl, exact for these integers.
    for (std::size_t j = 0; j < k_n; ++j)
      for (std::size_t l = 0; l < k_n; ++l)
        CHECK(dist[j * k_n + l] == gram[j * k_n + j] + gram[l * k_n + l] - 2 * gram[j * k_n + l]);
    // sgd: base + lr * delta, from a base 3 bytes off alignment.
    ServerStepParams p;
    p.kind = ServerOptKind::sgd;
    p.lr = 0.5;
    std::vector<double> delta(k_count, 2.0);
    cpu->server_step(p, k_count, delta.data(), s.pointers[k_n], t, nullptr, nullptr, DType::f64, out.data());
    for (std::uint64_t i = 0; i < k_count; i += 997) CHECK(out[i] == base_value(i) + 1.0);
  }
}
