// The CUDA kernels' per-element arithmetic (src/backends/cuda/cuda_elements.hpp), run on the host, against the CPU
// backend: same bytes for every dtype, so what the GPU computes differs from the CPU only if nvcc compiles the
// same source differently (which tests/gpu/test_cuda_backend.cpp checks where a GPU exists). The float16/bfloat16
// conversions and the server step are one shared source (element_math.hpp), checked in tests/core/test_dtype.cpp
// and tests/core/test_server_opt.cpp; the server-step case here checks the kernels' load/store around it.

#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <vector>

#include "backends/cpu/cpu_elements.hpp"
#include "backends/cuda/cuda_elements.hpp"
#include "support/float_bytes.hpp"
#include "support/task_variants.hpp"
#include "wavg/backend.hpp"

using namespace wavg;

namespace {

// N inputs of `count` random values of `dtype` in the kernels' layout, plus a base, as raw bytes.
struct Block {
  DType dtype;
  std::uint32_t n;
  std::uint64_t count;
  std::vector<unsigned char> data, base;
  std::vector<const void*> pointers;

  Block(DType t, std::uint32_t inputs, std::uint64_t c, unsigned seed) : dtype(t), n(inputs), count(c) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    const std::size_t e = dtype_size(t);
    data.resize(n * count * e);
    base.resize(count * e);
    for (std::uint64_t i = 0; i < n * count; ++i) test::store_float(t, data.data(), i, normal(rng) * 3);
    for (std::uint64_t i = 0; i < count; ++i) test::store_float(t, base.data(), i, normal(rng));
    for (std::uint32_t k = 0; k < n; ++k) pointers.push_back(data.data() + k * count * e);
  }
  BlockInputs cpu(bool with_base) const { return {dtype, count, pointers, with_base ? base.data() : nullptr}; }
  cuda::Inputs gpu(bool with_base) const { return {data.data(), count, n, with_base ? base.data() : nullptr}; }
};

constexpr DType k_floats[] = {DType::f16, DType::bf16, DType::f32, DType::f64};

}  // namespace

TEST_CASE("cuda elements: weighted sum gives the CPU backend's bytes for every input and output dtype") {
  auto cpu = make_cpu_backend();
  const std::vector<double> w{0.25, 1.5, 3.0, 0.125};
  for (DType in : k_floats)
    for (DType out : k_floats) {
      const Block b(in, 4, 5000, 11);
      std::vector<unsigned char> want(b.count * dtype_size(out)), got(want.size());
      cpu->weighted_sum(b.cpu(false), w, 4.875, out, want.data());
      cpu::dispatch_float(in, [&]<DType I>() {
        cpu::dispatch_float(out, [&]<DType O>() {
          for (std::uint64_t i = 0; i < b.count; ++i)
            cuda::weighted_sum_element<I, O>(b.gpu(false), w.data(), 4.875, got.data(), i);
        });
      });
      CHECK_MESSAGE(want == got, dtype_name(in), " -> ", dtype_name(out));
    }
}

TEST_CASE("cuda elements: norms, distances, combinations and order statistics match the CPU backend") {
  auto cpu = make_cpu_backend();
  const std::vector<double> scales{1.0, 0.5, 0.75, 1.0, 0.25}, weights{1, 2, 0, 1, 3}, coeffs{0.2, 0.1, 0.3, 0.3, 0.1};
  for (DType t : k_floats) {
    const Block b(t, 5, 40003, 13);  // three reduction chunks, the last one short and ending in a partial lane
    const BlockInputs c = b.cpu(true);
    const cuda::Inputs g = b.gpu(true);
    const std::uint64_t chunks = (b.count + cuda::k_reduce_chunk - 1) / cuda::k_reduce_chunk;
    std::vector<double> want(5, 0.0), got(5, 0.0);
    cpu->update_sum_squares(c, want.data());
    std::vector<double> dwant(25, 0.0), dgot(25, 0.0);
    cpu->update_sq_distances(c, scales.data(), dwant.data());
    cpu::dispatch_float(t, [&]<DType T>() {
      for (std::uint64_t r = 0; r < chunks; ++r) {
        const std::uint64_t begin = r * cuda::k_reduce_chunk, end = std::min(b.count, begin + cuda::k_reduce_chunk);
        for (std::uint32_t k = 0; k < 5; ++k) got[k] += sum_squares_chunk(cuda::Strided<T>{g}, k, begin, end);
        for (std::uint32_t j = 0; j < 5; ++j)
          for (std::uint32_t l = j + 1; l < 5; ++l)
            dgot[j * 5 + l] += sq_distance_chunk(cuda::Strided<T>{g}, scales.data(), j, l, begin, end);
      }
    });
    for (std::uint32_t j = 0; j < 5; ++j)
      for (std::uint32_t l = 0; l < j; ++l) dgot[j * 5 + l] = dgot[l * 5 + j];
    CHECK(std::memcmp(want.data(), got.data(), 5 * sizeof(double)) == 0);
    CHECK(std::memcmp(dwant.data(), dgot.data(), 25 * sizeof(double)) == 0);

    std::vector<double> ewant(b.count), egot(b.count);
    cpu->update_combine(c, coeffs.data(), 1.0, ewant.data());
    cpu::dispatch_float(t, [&]<DType T>() {
      for (std::uint64_t i = 0; i < b.count; ++i) egot[i] = combine_element(cuda::Strided<T>{g}, coeffs.data(), 1.0, i);
    });
    CHECK(std::memcmp(ewant.data(), egot.data(), b.count * sizeof(double)) == 0);

    for (const auto& [stat, trim] : {std::pair{OrderStat::median, 0u}, std::pair{OrderStat::trimmed_mean, 1u}}) {
      cpu->update_order_statistic(c, scales.data(), weights.data(), stat, trim, ewant.data());
      cuda::Valued v[5];
      cpu::dispatch_float(t, [&]<DType T>() {
        for (std::uint64_t i = 0; i < b.count; ++i)
          egot[i] = order_statistic_element(cuda::Strided<T>{g}, scales.data(), weights.data(), stat, trim, i, v);
      });
      CHECK(std::memcmp(ewant.data(), egot.data(), b.count * sizeof(double)) == 0);
    }
  }
}

TEST_CASE("cuda elements: every server optimizer step gives the CPU backend's bytes") {
  auto cpu = make_cpu_backend();
  const Block b(DType::f32, 1, 3000, 17);
  std::vector<double> delta(b.count);
  std::mt19937_64 rng(19);
  std::normal_distribution<double> normal;
  for (double& d : delta) d = normal(rng) * 1e-2;
  for (ServerOptKind kind : {ServerOptKind::none, ServerOptKind::sgd, ServerOptKind::momentum, ServerOptKind::adam,
                             ServerOptKind::yogi, ServerOptKind::adagrad})
    for (DType out : k_floats) {
      const ServerStepParams p{kind, 0.5, 0.9, 0.99, 1e-3};
      std::vector<double> m1(b.count, 0.01), v1(b.count, 1e-6), m2 = m1, v2 = v1;
      std::vector<unsigned char> want(b.count * dtype_size(out)), got(want.size());
      cpu->server_step(p, b.count, delta.data(), b.base.data(), DType::f32, m1.data(), v1.data(), out, want.data());
      cpu::dispatch_float(out, [&]<DType O>() {
        for (std::uint64_t i = 0; i < b.count; ++i) {
          const double step = server_step_element(p, delta[i], &m2[i], &v2[i]);
          cuda::store<O>(got.data(), i, cuda::load<DType::f32>(b.base.data(), i) + step);
        }
      });
      CHECK(want == got);
      CHECK(m1 == m2);
      CHECK(v1 == v2);
    }
}

TEST_CASE("cuda elements: the task-vector kernels give the CPU backend's bytes") {
  auto cpu = make_cpu_backend();
  constexpr std::uint32_t n = 6;  // two Philox blocks of drop masks
  constexpr std::uint64_t offset = 1000;
  for (DType t : k_floats) {
    const Block b(t, n, 40003, 23);  // three reduction chunks, the last one short
    const BlockInputs c = b.cpu(true);
    const cuda::Inputs g = b.gpu(true);
    double cut = 0;
    cpu::dispatch_float(t, [&]<DType T>() { cut = std::fabs(update_at<T>(b.pointers[1], b.base.data(), 777)); });
    const test::TaskVariants variants(n, cut, b.count);
    for (const test::TaskVariant& v : variants.all())
      for (DType out : {t, DType::f32}) {
        std::vector<unsigned char> want(b.count * dtype_size(out)), got(want.size());
        cpu->task_combine(c, v.params, offset, out, want.data());
        cpu::dispatch_float(t, [&]<DType T>() {
          cpu::dispatch_float(out, [&]<DType O>() {
            for (std::uint64_t i = 0; i < b.count; ++i)
              cuda::task_combine_element<T, O>(g, v.params, offset, got.data(), i);
          });
        });
        CHECK_MESSAGE(want == got, v.name, ": ", dtype_name(t), " -> ", dtype_name(out));
      }

    const TaskCombineParams dare = variants.all().back().params;
    std::vector<double> lwant(2 * n, 0.0), lgot(2 * n, 0.0), gwant(n * n, 0.0), ggot(n * n, 0.0);
    cpu->random_mask_l1(c, dare, offset, lwant.data());
    cpu->update_gram(c, gwant.data());
    cpu::dispatch_float(t, [&]<DType T>() {
      for (std::uint64_t begin = 0; begin < b.count; begin += cuda::k_reduce_chunk) {
        const std::uint64_t end = std::min(b.count, begin + cuda::k_reduce_chunk);
        for (std::uint32_t k = 0; k < n; ++k) {
          double l1[2];
          cuda::random_mask_l1_chunk<T>(g, dare, offset, k, begin, end, l1);
          lgot[2 * k] += l1[0];
          lgot[2 * k + 1] += l1[1];
        }
        for (std::uint32_t j = 0; j < n; ++j)
          for (std::uint32_t l = j; l < n; ++l) ggot[j * n + l] += cuda::gram_chunk<T>(g, j, l, begin, end);
      }
    });
    for (std::uint32_t j = 0; j < n; ++j)
      for (std::uint32_t l = 0; l < j; ++l) ggot[j * n + l] = ggot[l * n + j];
    CHECK(std::memcmp(lwant.data(), lgot.data(), lwant.size() * sizeof(double)) == 0);
    CHECK(std::memcmp(gwant.data(), ggot.data(), gwant.size() * sizeof(double)) == 0);
  }
}
