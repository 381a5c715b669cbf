#pragma once
// A backend runs the element-wise kernels of the merge methods on one device. The CPU backend is the reference;
// every other backend must give bit-identical results for the mean and weighted mean.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

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

// How task_combine sparsifies each task vector and combines them (wavg-merge(1), TASK VECTORS).
enum class Sparsify { none, magnitude, random };
enum class Consensus { none, sign };
enum class Normalize { no, yes };

// What task_combine needs besides the block; the arrays hold one value per input.
struct TaskCombineParams {
  const double* weights = nullptr;
  double lambda = 1;
  Sparsify sparsify = Sparsify::none;
  // magnitude: tau_k[i] is kept when |tau_k[i]| > threshold[k], or equals it and the element index (in the
  // tensor) is at most tie_last[k]: when it ranks at or above that cut, magnitudes in decreasing order and equal
  // ones by increasing index.
  const double* threshold = nullptr;
  const std::uint64_t* tie_last = nullptr;
  // magnitude, with these (breadcrumbs): of those, the ones that rank at or above this second cut are dropped too;
  // a NaN drop_threshold[k] drops none.
  const double* drop_threshold = nullptr;
  const std::uint64_t* drop_tie_last = nullptr;
  // random: tau_k[i] is kept when word k % 4 of philox_block(seed, stream + (k / 4 << 32), index), over 2^32, is
  // below its density (densities[k], or density when null), then divided by it (scale null) or multiplied by
  // scale[k].
  double density = 1;
  const double* densities = nullptr;
  const double* scale = nullptr;
  std::uint64_t seed = 0, stream = 0;
  // random, optional: the block's drop mask, one bit per element and input (input k's at kept + k * ((count + 63) /
  // 64), element i's at bit i % 64 of word i / 64, set when kept). random_mask_l1 stores it there and task_combine
  // takes it from there instead of drawing it again; a backend may draw it again instead (the same bits).
  std::uint64_t* kept = nullptr;
  Consensus consensus = Consensus::none;
  Normalize normalize = Normalize::no;
};

// The 2^15 buckets of magnitude_histogram: the top 16 bits of a non-negative double, which order as the values do.
constexpr std::size_t k_magnitude_buckets = 1 << 15;

// One candidate for the magnitude threshold: |tau| and its element index in the tensor.
struct Magnitude {
  double value;
  std::uint64_t index;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // Computes out[i] = (sum over k, in input order, of weights[k] * in[k][i]) / divisor in double, rounded once to
  // `out_dtype` (nearest, ties to even).
  virtual void weighted_sum(const BlockInputs& in, std::span<const double> weights, double divisor, DType out_dtype,
                            void* out) = 0;
  // Tells whether all inputs hold the same bytes.
  virtual bool all_equal(const BlockInputs& in) = 0;

  // Federated kernels (src/core/methods/federated.cpp). Below, u_k[i] = in[k][i] - base[i] (or in[k][i] when base is
  // null) and y_k[i] = scales[k] * u_k[i]. Reductions over elements run over fixed-size chunks summed in chunk order,
  // so they are bit-identical for any thread count. Every backend has them (pure: no default that would only throw).

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
  virtual void server_step(const ServerStepParams& params, std::uint64_t count, const double* delta, const void* base,
                           DType dtype, double* m, double* v, DType out_dtype, void* out) = 0;

  // Task-vector kernels (src/core/methods/task_vectors.cpp, slerp_stock.cpp); u_k as above. Every backend has them.

  // Adds sum_i u_j[i] * u_l[i] to gram[j * N + l] for every pair j <= l and mirrors it (chunked as above).
  virtual void update_gram(const BlockInputs& in, double* gram) = 0;
  // Adds to hist[b] the number of nonzero, non-NaN |u_k[i]| whose double's top 16 bits are b, for input k.
  virtual void magnitude_histogram(const BlockInputs& in, std::size_t k, std::uint64_t* hist) = 0;
  // Appends every nonzero |u_k[i]| in bucket `bucket` with its index offset + i (in an unspecified order).
  virtual void magnitude_candidates(const BlockInputs& in, std::size_t k, std::size_t bucket, std::uint64_t offset,
                                    std::vector<Magnitude>& out) = 0;
  // Adds, for every input k, sum_i |u_k[i]| to l1[2k] and the same sum over the elements Sparsify::random keeps
  // (TaskCombineParams's seed, stream and density) to l1[2k + 1] (chunked as above).
  virtual void random_mask_l1(const BlockInputs& in, const TaskCombineParams& p, std::uint64_t offset, double* l1) = 0;
  // Computes, per element i (index offset + i in its tensor), the task vectors tau_k = u_k sparsified as `p` says,
  // then base[i] + lambda * sum_k w_k tau_k (over the inputs that agree with the sign of that sum with
  // Consensus::sign; divided by the sum of their weights, or 1 when it is zero, with Normalize::yes), rounded once
  // to `out_dtype`.
  virtual void task_combine(const BlockInputs& in, const TaskCombineParams& p, std::uint64_t offset, DType out_dtype,
                            void* out) = 0;
};

std::unique_ptr<Backend> make_cpu_backend();

// Whether the CUDA backend can run here: `detail` names device 0 when it can, and says why not otherwise (built
// without CUDA, no driver, no device).
struct CudaProbe {
  bool usable = false;
  std::string detail;  // the GPU's name and memory, or in a few words why there is none ("no CUDA device")
  std::string cause;   // the driver's or runtime's own words, when it gave any: for -vv and --device cuda's error
};
CudaProbe probe_cuda();
// Returns the CUDA backend on device 0 (src/backends/cuda/); throws Error (exit 1) when probe_cuda() says no.
std::unique_ptr<Backend> make_cuda_backend();

}  // namespace wavg
