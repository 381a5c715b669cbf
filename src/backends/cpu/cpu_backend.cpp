// The reference backend. Kernels are templated on the input and output element types so the conversion to double
// is fused with the accumulation (one pass over memory, read straight from the files' mappings), vectorised, and
// parallelised over elements with a static OpenMP schedule. Every element's sum runs over inputs in order, so the
// result is the same for any thread count.

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_elements.hpp"
#include "backends/cpu/cpu_federated.hpp"
#include "backends/cpu/cpu_task.hpp"
#include "wavg/backend.hpp"
#include "wavg/error.hpp"

namespace wavg {

namespace {

using cpu::k_parallel_threshold;
using cpu::load;
using cpu::Storage;
using cpu::store;

// The inner loops, one per (type, instruction set; WAVG_CLONES, cpu_elements.hpp).

WAVG_CLONES void add_scaled(double* acc, const cpu::LooseF32* x, double w, std::size_t len) {
  for (std::size_t i = 0; i < len; ++i) acc[i] += w * static_cast<double>(x[i]);
}
WAVG_CLONES void add_scaled(double* acc, const cpu::LooseF64* x, double w, std::size_t len) {
  for (std::size_t i = 0; i < len; ++i) acc[i] += w * x[i];
}
WAVG_CLONES void divide_into(float* out, const double* acc, double divisor, std::size_t len) {
  for (std::size_t i = 0; i < len; ++i) out[i] = static_cast<float>(acc[i] / divisor);
}
WAVG_CLONES void divide_into(double* out, const double* acc, double divisor, std::size_t len) {
  for (std::size_t i = 0; i < len; ++i) out[i] = acc[i] / divisor;
}

// Input x may start at any byte address (cpu_elements.hpp).
template <DType In>
void accumulate(double* acc, const void* x, std::uint64_t first, double w, std::size_t len) {
  if constexpr (In == DType::f32)
    add_scaled(acc, static_cast<const cpu::LooseF32*>(x) + first, w, len);
  else if constexpr (In == DType::f64)
    add_scaled(acc, static_cast<const cpu::LooseF64*>(x) + first, w, len);
  else
    for (std::size_t i = 0; i < len; ++i) acc[i] += w * load<In>(x, first + i);
}

template <DType Out>
void finish(void* out, std::uint64_t first, const double* acc, double divisor, std::size_t len) {
  auto* p = static_cast<typename Storage<Out>::type*>(out) + first;
  if constexpr (Out == DType::f32 || Out == DType::f64)
    divide_into(p, acc, divisor, len);
  else
    for (std::size_t i = 0; i < len; ++i) store<Out>(p, i, acc[i] / divisor);
}

// Elements go in tiles small enough for the accumulators to stay in L1: each tile adds input 1, then input 2, ...
// into its accumulators, which keeps the per-element order (0 + w1*x1 + w2*x2 + ...) while every loop runs over
// contiguous elements and vectorises. Tiles are split statically between threads; a tile's result does not depend
// on which thread computes it.
template <DType In, DType Out>
void weighted_sum_kernel(const BlockInputs& in, const double* weights, double divisor, void* out) {
  constexpr std::uint64_t tile = 1024;
  const std::uint64_t n = in.count;
  const auto tiles = static_cast<std::int64_t>((n + tile - 1) / tile);
  const std::size_t inputs = in.data.size();
  const void* const* data = in.data.data();
#pragma omp parallel for schedule(static) if (n >= k_parallel_threshold)
  for (std::int64_t t = 0; t < tiles; ++t) {
    const std::uint64_t first = static_cast<std::uint64_t>(t) * tile;
    const auto len = static_cast<std::size_t>(std::min(tile, n - first));
    alignas(64) double acc[tile];
    std::fill_n(acc, len, 0.0);
    for (std::size_t k = 0; k < inputs; ++k) accumulate<In>(acc, data[k], first, weights[k], len);
    finish<Out>(out, first, acc, divisor, len);
  }
}

template <DType In>
void weighted_sum_to(const BlockInputs& in, const double* weights, double divisor, DType out_dtype, void* out) {
  switch (out_dtype) {
    case DType::f16: return weighted_sum_kernel<In, DType::f16>(in, weights, divisor, out);
    case DType::bf16: return weighted_sum_kernel<In, DType::bf16>(in, weights, divisor, out);
    case DType::f32: return weighted_sum_kernel<In, DType::f32>(in, weights, divisor, out);
    case DType::f64: return weighted_sum_kernel<In, DType::f64>(in, weights, divisor, out);
    default: WAVG_ASSERT(!"weighted_sum: output dtype is not floating point");
  }
}

class CpuBackend final : public Backend {
 public:
  const char* name() const override { return "cpu"; }

  void weighted_sum(const BlockInputs& in, std::span<const double> weights, double divisor, DType out_dtype,
                    void* out) override {
    WAVG_ASSERT(weights.size() == in.data.size());
    switch (in.dtype) {
      case DType::f16: return weighted_sum_to<DType::f16>(in, weights.data(), divisor, out_dtype, out);
      case DType::bf16: return weighted_sum_to<DType::bf16>(in, weights.data(), divisor, out_dtype, out);
      case DType::f32: return weighted_sum_to<DType::f32>(in, weights.data(), divisor, out_dtype, out);
      case DType::f64: return weighted_sum_to<DType::f64>(in, weights.data(), divisor, out_dtype, out);
      default: WAVG_ASSERT(!"weighted_sum: input dtype is not floating point");
    }
  }

  bool all_equal(const BlockInputs& in) override {
    const std::size_t bytes = in.count * dtype_size(in.dtype);
    for (std::size_t k = 1; k < in.data.size(); ++k)
      if (std::memcmp(in.data[0], in.data[k], bytes) != 0) return false;
    return true;
  }

  void update_sum_squares(const BlockInputs& in, double* sums) override { cpu::update_sum_squares(in, sums); }
  void update_sq_distances(const BlockInputs& in, const double* scales, double* dist) override {
    cpu::update_sq_distances(in, scales, dist);
  }
  void update_combine(const BlockInputs& in, const double* coeffs, double divisor, double* out) override {
    cpu::update_combine(in, coeffs, divisor, out);
  }
  void update_order_statistic(const BlockInputs& in, const double* scales, const double* weights, OrderStat stat,
                              std::uint32_t trim, double* out) override {
    cpu::update_order_statistic(in, scales, weights, stat, trim, out);
  }
  void add_gaussian_noise(double* values, std::uint64_t count, double sigma, std::uint64_t seed, std::uint64_t stream,
                          std::uint64_t offset) override {
    cpu::add_gaussian_noise(values, count, sigma, seed, stream, offset);
  }
  void server_step(const ServerStepParams& params, std::uint64_t count, const double* delta, const void* base,
                   DType dtype, double* m, double* v, DType out_dtype, void* out) override {
    cpu::server_step(params, count, delta, base, dtype, m, v, out_dtype, out);
  }
  void update_gram(const BlockInputs& in, double* gram) override { cpu::update_gram(in, gram); }
  void magnitude_histogram(const BlockInputs& in, std::size_t k, std::uint64_t* hist) override {
    cpu::magnitude_histogram(in, k, hist);
  }
  void magnitude_candidates(const BlockInputs& in, std::size_t k, std::size_t bucket, std::uint64_t offset,
                            std::vector<Magnitude>& out) override {
    cpu::magnitude_candidates(in, k, bucket, offset, out);
  }
  void random_mask_l1(const BlockInputs& in, const TaskCombineParams& p, std::uint64_t offset, double* l1) override {
    cpu::random_mask_l1(in, p, offset, l1);
  }
  void task_combine(const BlockInputs& in, const TaskCombineParams& p, std::uint64_t offset, DType out_dtype,
                    void* out) override {
    cpu::task_combine(in, p, offset, out_dtype, out);
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace wavg
