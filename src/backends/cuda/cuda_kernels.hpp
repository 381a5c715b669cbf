#pragma once
// Launchers for the CUDA kernels (cuda_kernels.cu). They take device pointers, enqueue on `stream` and return at
// once; launch errors are reported by the caller's next checked CUDA call. Plain C++, so cuda_backend.cpp is
// compiled by the host compiler with the project's warnings.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/cuda_elements.hpp"

namespace wavg::cuda {

// One chunk of `count` elements of `dtype` in the layout of cuda_elements.hpp.
struct Chunk {
  DType dtype = DType::f32;
  std::uint64_t count = 0;
  Inputs in{};
};

// out[i] = weighted_sum_element(...) for i < count; `out` holds `out_dtype` values.
void launch_weighted_sum(cudaStream_t stream, const Chunk& c, const double* weights, double divisor, DType out_dtype,
                         void* out);
// partial[r * n + k] = sum_squares_chunk over reduction chunk r of this chunk (count is a multiple of
// k_reduce_chunk except at the end of a block).
void launch_sum_squares(cudaStream_t stream, const Chunk& c, double* partial);
// partial[r * n * n + j * n + l] = sq_distance_chunk for j < l over reduction chunk r (other entries untouched).
void launch_sq_distances(cudaStream_t stream, const Chunk& c, const double* scales, double* partial);
void launch_combine(cudaStream_t stream, const Chunk& c, const double* coeffs, double divisor, double* out);
// Requires n <= k_max_sort_inputs.
void launch_order_statistic(cudaStream_t stream, const Chunk& c, const double* scales, const double* weights,
                            OrderStat stat, std::uint32_t trim, double* out);
void launch_gaussian_noise(cudaStream_t stream, double* values, std::uint64_t count, double sigma, std::uint64_t seed,
                           std::uint64_t tensor, std::uint64_t offset);
// `base` holds `dtype` values or is null; m and v may be null when the optimizer does not use them.
void launch_server_step(cudaStream_t stream, const ServerStepParams& p, std::uint64_t count, const double* delta,
                        const void* base, DType dtype, double* m, double* v, DType out_dtype, void* out);

// Task-vector kernels (cuda_elements.hpp). `p`'s arrays are device pointers.
void launch_task_combine(cudaStream_t stream, const Chunk& c, const TaskCombineParams& p, std::uint64_t offset,
                         DType out_dtype, void* out);
// partial[(r * n + k) * 2 + {0, 1}] = random_mask_l1_chunk of input k over reduction chunk r.
void launch_random_mask_l1(cudaStream_t stream, const Chunk& c, const TaskCombineParams& p, std::uint64_t offset,
                           double* partial);
// partial[r * n * n + j * n + l] = gram_chunk for j <= l over reduction chunk r (other entries untouched).
void launch_gram(cudaStream_t stream, const Chunk& c, double* partial);
// hist[magnitude_bucket(u_0[i])] += 1 for every counted element of the chunk's one input (atomic adds).
void launch_magnitude_histogram(cudaStream_t stream, const Chunk& c, unsigned long long* hist);

}  // namespace wavg::cuda
