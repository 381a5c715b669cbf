// The CUDA backend against the CPU backend on the device (ctest gpu.cuda_backend; exits 77, a skip, without a
// usable GPU). The mean and weighted mean must be the same bytes for every input and output dtype, on blocks large
// enough to run through both staging slots several times. The other kernels must agree within k_tolerance
// (relative); they are expected to be exact too, apart from the noise, whose log and cos come from CUDA's math
// library (within 2 ulp) instead of glibc's. The number of elements that are not bit-identical is printed. The
// task-vector kernels (task arithmetic, TIES, breadcrumbs, DARE; the Gram matrix of SLERP and model stock;
// the magnitude histogram and DARE's norms) must be the same bytes, over six inputs (two Philox blocks).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "support/float_bytes.hpp"
#include "support/task_variants.hpp"
#include "wavg/backend.hpp"
#include "wavg/error.hpp"

using namespace wavg;

namespace {

constexpr double k_tolerance = 1e-12;
int g_failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) ++g_failures;
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
}

void store(DType t, unsigned char* p, std::uint64_t i, double v) { test::store_float(t, p, i, v); }

struct Block {
  std::vector<std::vector<unsigned char>> inputs;
  std::vector<unsigned char> base;
  std::vector<const void*> pointers;
  BlockInputs view(DType t, std::uint64_t count, bool with_base) const {
    return {t, count, pointers, with_base ? base.data() : nullptr};
  }
};

Block random_block(DType t, std::size_t n, std::uint64_t count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 2.0);
  Block b;
  b.inputs.resize(n, std::vector<unsigned char>(count * dtype_size(t)));
  b.base.resize(count * dtype_size(t));
  for (auto& in : b.inputs)
    for (std::uint64_t i = 0; i < count; ++i) store(t, in.data(), i, normal(rng));
  for (std::uint64_t i = 0; i < count; ++i) store(t, b.base.data(), i, normal(rng));
  for (auto& in : b.inputs) b.pointers.push_back(in.data());
  return b;
}

// Checks a against b within k_tolerance and prints how many differ at all.
void expect_close(const std::vector<double>& a, const std::vector<double>& b, const char* what) {
  std::size_t inexact = 0;
  bool ok = a.size() == b.size();
  for (std::size_t i = 0; ok && i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0) ++inexact;
    if (!(std::fabs(a[i] - b[i]) <= k_tolerance * std::max(1.0, std::fabs(b[i])))) ok = false;
  }
  std::printf("   %s: %zu of %zu values not bit-identical\n", what, inexact, a.size());
  expect(ok, what);
}

// The task-vector kernels on six inputs of dtype `in`, against the CPU backend, byte for byte.
void check_task_kernels(Backend& cpu, Backend& gpu, DType in, std::uint64_t count) {
  constexpr std::size_t n = 6;
  constexpr std::uint64_t offset = 12345;  // the block's first element in its tensor keys the drop mask
  const Block b = random_block(in, n, count, 50 + static_cast<unsigned>(in));
  const BlockInputs view = b.view(in, count, true);
  // A magnitude that occurs among the updates, so that the tie rule at the cut decides: u_1 itself (1 * u_1 + 0).
  std::vector<double> u1(count);
  const std::vector<double> pick{0, 1, 0, 0, 0, 0};
  cpu.update_combine(view, pick.data(), 1.0, u1.data());
  const test::TaskVariants variants(n, std::fabs(u1[777]), count);
  for (const test::TaskVariant& v : variants.all())
    for (DType out : {in, DType::f32}) {
      std::vector<unsigned char> want(count * dtype_size(out)), got(want.size());
      cpu.task_combine(view, v.params, offset, out, want.data());
      gpu.task_combine(view, v.params, offset, out, got.data());
      const std::string what =
          v.name + " " + std::string(dtype_name(in)) + " -> " + std::string(dtype_name(out)) + " bit-identical";
      expect(want == got, what.c_str());
    }
  const TaskCombineParams dare = variants.all().back().params;
  std::vector<double> l1a(2 * n, 0.0), l1b(2 * n, 0.0), ga(n * n, 0.0), gb(n * n, 0.0);
  cpu.random_mask_l1(view, dare, offset, l1a.data());
  gpu.random_mask_l1(view, dare, offset, l1b.data());
  expect(std::memcmp(l1a.data(), l1b.data(), l1a.size() * sizeof(double)) == 0, "DARE's L1 norms bit-identical");
  cpu.update_gram(view, ga.data());
  gpu.update_gram(view, gb.data());
  expect(std::memcmp(ga.data(), gb.data(), ga.size() * sizeof(double)) == 0, "Gram matrix bit-identical");
  for (std::size_t k = 0; k < n; k += 5) {
    std::vector<std::uint64_t> ha(k_magnitude_buckets, 0), hb(k_magnitude_buckets, 0);
    cpu.magnitude_histogram(view, k, ha.data());
    gpu.magnitude_histogram(view, k, hb.data());
    expect(ha == hb, "magnitude histogram");
    const std::size_t fullest = static_cast<std::size_t>(std::max_element(ha.begin(), ha.end()) - ha.begin());
    std::vector<Magnitude> ca, cb;
    cpu.magnitude_candidates(view, k, fullest, offset, ca);
    gpu.magnitude_candidates(view, k, fullest, offset, cb);
    auto by_index = [](const Magnitude& x, const Magnitude& y) { return x.index < y.index; };
    std::sort(ca.begin(), ca.end(), by_index);
    std::sort(cb.begin(), cb.end(), by_index);
    expect(ca.size() == ha[fullest] && ca.size() == cb.size() &&
               std::equal(ca.begin(), ca.end(), cb.begin(),
                          [](const Magnitude& x, const Magnitude& y) {
                            return x.index == y.index && std::memcmp(&x.value, &y.value, sizeof(double)) == 0;
                          }),
           "magnitude candidates");
  }
}

}  // namespace

int main() {
  const CudaProbe probe = probe_cuda();
  if (!probe.usable) {
    std::printf("skipped: %s\n", probe.detail.c_str());
    return 77;
  }
  std::printf("device: %s\n", probe.detail.c_str());
  try {
    auto gpu = make_cuda_backend();
    auto cpu = make_cpu_backend();
    const DType floats[] = {DType::f16, DType::bf16, DType::f32, DType::f64};
    const std::uint64_t count = 3'000'017;  // several staging chunks, and a short last one
    for (DType in : floats) {
      const Block b = random_block(in, 4, count, 1 + static_cast<unsigned>(in));
      for (DType out : floats) {
        for (const bool weighted : {false, true}) {
          const std::vector<double> w = weighted ? std::vector<double>{0.1, 2.5, 0.7, 1.3} : std::vector<double>(4, 1);
          const double divisor = weighted ? 4.6 : 4;
          std::vector<unsigned char> want(count * dtype_size(out)), got(want.size());
          cpu->weighted_sum(b.view(in, count, false), w, divisor, out, want.data());
          gpu->weighted_sum(b.view(in, count, false), w, divisor, out, got.data());
          const std::string what = std::string(weighted ? "weighted mean " : "mean ") + std::string(dtype_name(in)) +
                                   " -> " + std::string(dtype_name(out)) + " bit-identical";
          expect(want == got, what.c_str());
        }
      }
      {
        // Readers lend views at any byte address; the backend stages them with memcpy, so inputs 3 bytes off
        // alignment give the aligned inputs' bytes.
        std::vector<std::vector<unsigned char>> shifted;
        std::vector<const void*> pointers;
        for (const auto& x : b.inputs) {
          shifted.emplace_back(x.size() + 3);
          std::memcpy(shifted.back().data() + 3, x.data(), x.size());
          pointers.push_back(shifted.back().data() + 3);
        }
        const std::vector<double> w(4, 1);
        std::vector<unsigned char> want(count * dtype_size(in)), got(want.size());
        cpu->weighted_sum(b.view(in, count, false), w, 4, in, want.data());
        gpu->weighted_sum({in, count, pointers, nullptr}, w, 4, in, got.data());
        expect(want == got, "mean of inputs 3 bytes off alignment bit-identical");
      }
      const BlockInputs view = b.view(in, count, true);
      const std::vector<double> scales{1, 0.5, 0.25, 1}, weights{1, 2, 1, 0}, coeffs{0.1, 0.2, 0.3, 0.4};
      std::vector<double> s1(4, 0.0), s2(4, 0.0), d1(16, 0.0), d2(16, 0.0), e1(count), e2(count);
      cpu->update_sum_squares(view, s1.data());
      gpu->update_sum_squares(view, s2.data());
      expect_close(s2, s1, "sum of squares (clipping norms)");
      cpu->update_sq_distances(view, scales.data(), d1.data());
      gpu->update_sq_distances(view, scales.data(), d2.data());
      expect_close(d2, d1, "squared distances (Krum, geometric median)");
      cpu->update_combine(view, coeffs.data(), 1.0, e1.data());
      gpu->update_combine(view, coeffs.data(), 1.0, e2.data());
      expect_close(e2, e1, "combination of updates");
      cpu->update_order_statistic(view, scales.data(), weights.data(), OrderStat::median, 0, e1.data());
      gpu->update_order_statistic(view, scales.data(), weights.data(), OrderStat::median, 0, e2.data());
      expect_close(e2, e1, "weighted median");
      cpu->update_order_statistic(view, scales.data(), weights.data(), OrderStat::trimmed_mean, 1, e1.data());
      gpu->update_order_statistic(view, scales.data(), weights.data(), OrderStat::trimmed_mean, 1, e2.data());
      expect_close(e2, e1, "trimmed mean");
      std::vector<double> n1(count, 0.0), n2(count, 0.0);
      cpu->add_gaussian_noise(n1.data(), count, 1.0, 42, 3, 1000);
      gpu->add_gaussian_noise(n2.data(), count, 1.0, 42, 3, 1000);
      expect_close(n2, n1, "Gaussian noise");
      for (ServerOptKind kind : {ServerOptKind::sgd, ServerOptKind::momentum, ServerOptKind::adam, ServerOptKind::yogi,
                                 ServerOptKind::adagrad}) {
        const ServerStepParams p{kind, 0.5, 0.9, 0.99, 1e-3};
        std::vector<double> m1(count, 0.01), v1(count, 1e-6), m2 = m1, v2 = v1;
        std::vector<unsigned char> o1(count * dtype_size(in)), o2(o1.size());
        cpu->server_step(p, count, e1.data(), b.base.data(), in, m1.data(), v1.data(), in, o1.data());
        gpu->server_step(p, count, e1.data(), b.base.data(), in, m2.data(), v2.data(), in, o2.data());
        expect(o1 == o2 && m1 == m2 && v1 == v2, "server optimizer step");
      }
      check_task_kernels(*cpu, *gpu, in, count);
    }
  } catch (const Error& e) {
    for (const auto& p : e.problems()) std::printf("FAILED: %s\n", p.what.c_str());
    return 1;
  }
  std::printf("%d failure(s)\n", g_failures);
  return g_failures ? 1 : 0;
}
