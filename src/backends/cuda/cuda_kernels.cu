// The CUDA kernels: thin grid-stride loops around the per-element functions of cuda_elements.hpp, one thread per
// element (per reduction chunk and input, or input pair, for the reductions, which keep the CPU's element order
// inside each chunk so the partial sums are the same bits). Compiled with -fmad=false (CMakeLists.txt).

#include "backends/cuda/cuda_kernels.hpp"
#include "wavg/dispatch_float.hpp"
#include "wavg/philox.hpp"

namespace wavg::cuda {

namespace {

constexpr unsigned k_threads = 256;

unsigned blocks_for(std::uint64_t work) {
  const std::uint64_t b = (work + k_threads - 1) / k_threads;
  return static_cast<unsigned>(b < (1u << 20) ? (b ? b : 1) : (1u << 20));
}

__device__ inline std::uint64_t first_index() {
  return static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::uint64_t grid_step() { return static_cast<std::uint64_t>(gridDim.x) * blockDim.x; }

template <DType In, DType Out>
__global__ void weighted_sum_kernel(Inputs in, std::uint64_t count, const double* weights, double divisor, void* out) {
  for (std::uint64_t i = first_index(); i < count; i += grid_step())
    weighted_sum_element<In, Out>(in, weights, divisor, out, i);
}

template <DType T>
__global__ void sum_squares_kernel(Inputs in, std::uint64_t count, double* partial) {
  const std::uint64_t work = reduce_chunks(count) * in.n;
  for (std::uint64_t w = first_index(); w < work; w += grid_step()) {
    const std::uint64_t r = w / in.n;
    const auto k = static_cast<std::uint32_t>(w % in.n);
    const std::uint64_t begin = r * k_reduce_chunk;
    const std::uint64_t end = begin + k_reduce_chunk < count ? begin + k_reduce_chunk : count;
    partial[w] = sum_squares_chunk(Strided<T>{in}, k, begin, end);
  }
}

template <DType T>
__global__ void sq_distances_kernel(Inputs in, std::uint64_t count, const double* scales, double* partial) {
  const std::uint64_t nn = std::uint64_t{in.n} * in.n;
  const std::uint64_t work = reduce_chunks(count) * nn;
  for (std::uint64_t w = first_index(); w < work; w += grid_step()) {
    const std::uint64_t r = w / nn;
    const auto j = static_cast<std::uint32_t>(w % nn / in.n);
    const auto l = static_cast<std::uint32_t>(w % in.n);
    if (j >= l) continue;
    const std::uint64_t begin = r * k_reduce_chunk;
    const std::uint64_t end = begin + k_reduce_chunk < count ? begin + k_reduce_chunk : count;
    partial[w] = sq_distance_chunk(Strided<T>{in}, scales, j, l, begin, end);
  }
}

template <DType T>
__global__ void combine_kernel(Inputs in, std::uint64_t count, const double* coeffs, double divisor, double* out) {
  for (std::uint64_t i = first_index(); i < count; i += grid_step())
    out[i] = combine_element(Strided<T>{in}, coeffs, divisor, i);
}

template <DType T>
__global__ void order_statistic_kernel(Inputs in, std::uint64_t count, const double* scales, const double* weights,
                                       OrderStat stat, std::uint32_t trim, double* out) {
  Valued v[k_max_sort_inputs];
  for (std::uint64_t i = first_index(); i < count; i += grid_step())
    out[i] = order_statistic_element(Strided<T>{in}, scales, weights, stat, trim, i, v);
}

__global__ void noise_kernel(double* values, std::uint64_t count, double sigma, std::uint64_t seed,
                             std::uint64_t tensor, std::uint64_t offset) {
  for (std::uint64_t i = first_index(); i < count; i += grid_step())
    values[i] += sigma * philox_normal(seed, tensor, offset + i);
}

template <DType T, DType O>
__global__ void server_step_kernel(ServerStepParams p, std::uint64_t count, const double* delta, const void* base,
                                   double* m, double* v, void* out) {
  for (std::uint64_t i = first_index(); i < count; i += grid_step()) {
    const double step = server_step_element(p, delta[i], m ? m + i : nullptr, v ? v + i : nullptr);
    store<O>(out, i, base ? load<T>(base, i) + step : step);
  }
}

template <DType T, DType O>
__global__ void task_combine_kernel(Inputs in, std::uint64_t count, TaskCombineParams p, std::uint64_t offset,
                                    void* out) {
  for (std::uint64_t i = first_index(); i < count; i += grid_step()) task_combine_element<T, O>(in, p, offset, out, i);
}

template <DType T>
__global__ void random_mask_l1_kernel(Inputs in, std::uint64_t count, TaskCombineParams p, std::uint64_t offset,
                                      double* partial) {
  const std::uint64_t work = reduce_chunks(count) * in.n;
  for (std::uint64_t w = first_index(); w < work; w += grid_step()) {
    const std::uint64_t begin = w / in.n * k_reduce_chunk;
    const std::uint64_t end = begin + k_reduce_chunk < count ? begin + k_reduce_chunk : count;
    random_mask_l1_chunk<T>(in, p, offset, static_cast<std::uint32_t>(w % in.n), begin, end, partial + 2 * w);
  }
}

template <DType T>
__global__ void gram_kernel(Inputs in, std::uint64_t count, double* partial) {
  const std::uint64_t nn = std::uint64_t{in.n} * in.n;
  const std::uint64_t work = reduce_chunks(count) * nn;
  for (std::uint64_t w = first_index(); w < work; w += grid_step()) {
    const auto j = static_cast<std::uint32_t>(w % nn / in.n);
    const auto l = static_cast<std::uint32_t>(w % in.n);
    if (j > l) continue;
    const std::uint64_t begin = w / nn * k_reduce_chunk;
    const std::uint64_t end = begin + k_reduce_chunk < count ? begin + k_reduce_chunk : count;
    partial[w] = gram_chunk<T>(in, j, l, begin, end);
  }
}

template <DType T>
__global__ void magnitude_histogram_kernel(Inputs in, std::uint64_t count, unsigned long long* hist) {
  for (std::uint64_t i = first_index(); i < count; i += grid_step()) {
    const std::uint32_t b = magnitude_bucket(update_at<T>(in.data, in.base, i));
    if (b < k_magnitude_buckets) atomicAdd(hist + b, 1ull);
  }
}

}  // namespace

void launch_weighted_sum(cudaStream_t stream, const Chunk& c, const double* weights, double divisor, DType out_dtype,
                         void* out) {
  dispatch_float(c.dtype, [&]<DType In>() {
    dispatch_float(out_dtype, [&]<DType Out>() {
      weighted_sum_kernel<In, Out><<<blocks_for(c.count), k_threads, 0, stream>>>(c.in, c.count, weights, divisor, out);
    });
  });
}

void launch_sum_squares(cudaStream_t stream, const Chunk& c, double* partial) {
  dispatch_float(c.dtype, [&]<DType T>() {
    sum_squares_kernel<T>
        <<<blocks_for(reduce_chunks(c.count) * c.in.n), k_threads, 0, stream>>>(c.in, c.count, partial);
  });
}

void launch_sq_distances(cudaStream_t stream, const Chunk& c, const double* scales, double* partial) {
  const std::uint64_t work = reduce_chunks(c.count) * c.in.n * c.in.n;
  dispatch_float(c.dtype, [&]<DType T>() {
    sq_distances_kernel<T><<<blocks_for(work), k_threads, 0, stream>>>(c.in, c.count, scales, partial);
  });
}

void launch_combine(cudaStream_t stream, const Chunk& c, const double* coeffs, double divisor, double* out) {
  dispatch_float(c.dtype, [&]<DType T>() {
    combine_kernel<T><<<blocks_for(c.count), k_threads, 0, stream>>>(c.in, c.count, coeffs, divisor, out);
  });
}

void launch_order_statistic(cudaStream_t stream, const Chunk& c, const double* scales, const double* weights,
                            OrderStat stat, std::uint32_t trim, double* out) {
  dispatch_float(c.dtype, [&]<DType T>() {
    order_statistic_kernel<T>
        <<<blocks_for(c.count), k_threads, 0, stream>>>(c.in, c.count, scales, weights, stat, trim, out);
  });
}

void launch_gaussian_noise(cudaStream_t stream, double* values, std::uint64_t count, double sigma, std::uint64_t seed,
                           std::uint64_t tensor, std::uint64_t offset) {
  noise_kernel<<<blocks_for(count), k_threads, 0, stream>>>(values, count, sigma, seed, tensor, offset);
}

void launch_server_step(cudaStream_t stream, const ServerStepParams& p, std::uint64_t count, const double* delta,
                        const void* base, DType dtype, double* m, double* v, DType out_dtype, void* out) {
  dispatch_float(dtype, [&]<DType T>() {
    dispatch_float(out_dtype, [&]<DType O>() {
      server_step_kernel<T, O><<<blocks_for(count), k_threads, 0, stream>>>(p, count, delta, base, m, v, out);
    });
  });
}

void launch_task_combine(cudaStream_t stream, const Chunk& c, const TaskCombineParams& p, std::uint64_t offset,
                         DType out_dtype, void* out) {
  dispatch_float(c.dtype, [&]<DType T>() {
    dispatch_float(out_dtype, [&]<DType O>() {
      task_combine_kernel<T, O><<<blocks_for(c.count), k_threads, 0, stream>>>(c.in, c.count, p, offset, out);
    });
  });
}

void launch_random_mask_l1(cudaStream_t stream, const Chunk& c, const TaskCombineParams& p, std::uint64_t offset,
                           double* partial) {
  dispatch_float(c.dtype, [&]<DType T>() {
    random_mask_l1_kernel<T>
        <<<blocks_for(reduce_chunks(c.count) * c.in.n), k_threads, 0, stream>>>(c.in, c.count, p, offset, partial);
  });
}

void launch_gram(cudaStream_t stream, const Chunk& c, double* partial) {
  const std::uint64_t work = reduce_chunks(c.count) * c.in.n * c.in.n;
  dispatch_float(
      c.dtype, [&]<DType T>() { gram_kernel<T><<<blocks_for(work), k_threads, 0, stream>>>(c.in, c.count, partial); });
}

void launch_magnitude_histogram(cudaStream_t stream, const Chunk& c, unsigned long long* hist) {
  dispatch_float(c.dtype, [&]<DType T>() {
    magnitude_histogram_kernel<T><<<blocks_for(c.count), k_threads, 0, stream>>>(c.in, c.count, hist);
  });
}

}  // namespace wavg::cuda
