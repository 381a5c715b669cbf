#pragma once
// A backend runs the element-wise kernels of the merge methods on one device. The CPU backend is the reference;
// every other backend must give bit-identical results for the mean and weighted mean.

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "wavg/dtype.hpp"

namespace wavg {

// One block of one tensor from every input: N pointers to `count` elements of `dtype`.
struct BlockInputs {
  DType dtype = DType::f32;
  std::uint64_t count = 0;
  std::span<const void* const> data;
  // The global model's values for the same range (same dtype), or null. Federated kernels work on the updates
  // x_k - base (x_k itself when null).
  const void* base = nullptr;
};

// What an order-statistic kernel computes per element over the inputs' updates.
enum class OrderStat { median, trimmed_mean };

// Which server optimizer server_step applies; the update rules are in man/wavg-merge.1.
enum class ServerOptKind { none, sgd, momentum, adam, yogi, adagrad };

struct ServerStepParams {
  ServerOptKind kind = ServerOptKind::none;
  double lr = 1, beta1 = 0.9, beta2 = 0.99, tau = 1e-3;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // Computes out[i] = (sum over k, in input order, of weights[k] * in[k][i]) / divisor in double, rounded once to
  // `out_dtype` (nearest, ties to even).
  virtual void weighted_sum(const BlockInputs& in, std::span<const double> weights, double divisor,
                            DType out_dtype, void* out) = 0;
  // Tells whether all inputs hold the same bytes.
  virtual bool all_equal(const BlockInputs& in) = 0;

  // Federated kernels (src/core/federated.cpp). Below, u_k[i] = in[k][i] - base[i] (or in[k][i] when base is null)
  // and y_k[i] = scales[k] * u_k[i]. Reductions over elements run over fixed-size chunks summed in chunk order, so
  // they are bit-identical for any thread count. Every backend has them (pure: no default that would only
  // throw).

  // Adds sum_i u_k[i]^2 to sums[k] for every input k.
  virtual void update_sum_squares(const BlockInputs& in, double* sums) = 0;
  // Adds sum_i (y_j[i] - y_l[i])^2 to dist[j * N + l] for every pair of inputs (the matrix stays symmetric).
  virtual void update_sq_distances(const BlockInputs& in, const double* scales, double* dist) = 0;
  // Computes out[i] = (sum over k, in input order, of coeffs[k] * u_k[i]) / divisor.
  virtual void update_combine(const BlockInputs& in, const double* coeffs, double divisor, double* out) = 0;
  // Computes out[i] = the weighted median, or the mean of what is left after cutting `trim` values at each end, of
  // y_k[i] over k (weights: N values, used by the median only).
  virtual void update_order_statistic(const BlockInputs& in, const double* scales, const double* weights,
                                      OrderStat stat, std::uint32_t trim, double* out) = 0;
  // Adds sigma * N(0, 1) to values[i]; the normal deviate for element `offset + i` of tensor `stream` depends only
  // on (seed, stream, offset + i), never on the block or thread layout.
  virtual void add_gaussian_noise(double* values, std::uint64_t count, double sigma, std::uint64_t seed,
                                  std::uint64_t stream, std::uint64_t offset) = 0;
  // Applies the server optimizer to `count` elements: reads the aggregated update delta[i] and the moments m[i],
  // v[i] (updated in place; unused ones may be null), and writes base[i] + step (or delta[i] + 0 when base is
  // null) rounded once to `out_dtype` in `out`; `base` holds `dtype` values.
  virtual void server_step(const ServerStepParams& params, std::uint64_t count, const double* delta,
                           const void* base, DType dtype, double* m, double* v, DType out_dtype, void* out) = 0;
};

std::unique_ptr<Backend> make_cpu_backend();

// Whether the CUDA backend can run here: `detail` names device 0 when it can, and says why not otherwise (built
// without CUDA, no driver, no device).
struct CudaProbe {
  bool usable = false;
  std::string detail;
};
CudaProbe probe_cuda();
// Returns the CUDA backend on device 0 (src/backends/cuda/); throws Error (exit 1) when probe_cuda() says no.
std::unique_ptr<Backend> make_cuda_backend();

}  // namespace wavg
