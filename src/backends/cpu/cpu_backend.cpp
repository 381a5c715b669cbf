// The reference backend. Kernels are templated on the input and output element types so the conversion to double
// is fused with the accumulation (one pass over memory), and parallelised over elements with a static OpenMP
// schedule. Every element's sum runs over inputs in order, so the result is the same for any thread count.

#include <omp.h>

#include <cstring>
#include <vector>

#include "backends/cpu/cpu_elements.hpp"
#include "backends/cpu/cpu_federated.hpp"
#include "wavg/backend.hpp"
#include "wavg/error.hpp"

namespace wavg {

namespace {

using cpu::k_parallel_threshold;
using cpu::load;
using cpu::store;

template <DType In, DType Out>
void weighted_sum_kernel(const BlockInputs& in, const double* weights, double divisor, void* out) {
  const auto n = static_cast<std::int64_t>(in.count);
  const std::size_t inputs = in.data.size();
  const void* const* data = in.data.data();
#pragma omp parallel for schedule(static) if (in.count >= k_parallel_threshold)
  for (std::int64_t i = 0; i < n; ++i) {
    double acc = 0;
    for (std::size_t k = 0; k < inputs; ++k) acc += weights[k] * load<In>(data[k], static_cast<std::uint64_t>(i));
    store<Out>(out, static_cast<std::uint64_t>(i), acc / divisor);
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
  void add_gaussian_noise(double* values, std::uint64_t count, double sigma, std::uint64_t seed,
                          std::uint64_t stream, std::uint64_t offset) override {
    cpu::add_gaussian_noise(values, count, sigma, seed, stream, offset);
  }
  void server_step(const ServerStepParams& params, std::uint64_t count, const double* delta, const void* base,
                   DType dtype, double* m, double* v, DType out_dtype, void* out) override {
    cpu::server_step(params, count, delta, base, dtype, m, v, out_dtype, out);
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace wavg
