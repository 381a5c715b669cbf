#pragma once
// The per-element arithmetic of the CUDA kernels, as __host__ __device__ functions so the same source runs on the
// GPU and in a host test (tests/backends/test_cuda_elements.cpp) that compares it with the CPU backend bit for bit
// on a machine without a GPU. Every function does the IEEE operations of its CPU counterpart in the same order;
// the .cu files are compiled with -fmad=false so nvcc does not fuse a*b+c where g++ (-ffp-contract=off) does not.
// Division and sqrt are correctly rounded on both (nvcc's default -prec-div=true -prec-sqrt=true).
//
// Device layout: the N inputs of a chunk lie one after another in one buffer, input k at element k * stride.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "wavg/backend.hpp"
#include "wavg/element_math.hpp"

namespace wavg::cuda {

// Shared with the CPU backend (element_math.hpp).
using wavg::k_reduce_chunk;
using wavg::load;
using wavg::Storage;
using wavg::store;
using wavg::Valued;

// Most inputs an order-statistic kernel sorts in registers; more go to the CPU backend.
constexpr std::size_t k_max_sort_inputs = 64;

// A chunk of N inputs on the device: input k's element i is at data + (k * stride + i) elements.
struct Inputs {
  const void* data;
  std::uint64_t stride;
  std::uint32_t n;
  const void* base;  // same layout as one input, or null
};

template <DType T> WAVG_HD inline const void* input_at(const Inputs& in, std::uint32_t k) {
  return static_cast<const typename Storage<T>::type*>(in.data) + k * in.stride;
}

template <DType T> WAVG_HD inline double update_at(const Inputs& in, std::uint32_t k, std::uint64_t i) {
  const double v = load<T>(input_at<T>(in, k), i);
  return in.base ? v - load<T>(in.base, i) : v;
}

// Backend::weighted_sum for one element: 0 + w_1 x_1 + w_2 x_2 + ..., divided once, rounded once.
template <DType In, DType Out>
WAVG_HD inline void weighted_sum_element(const Inputs& in, const double* weights, double divisor, void* out,
                                         std::uint64_t i) {
  double acc = 0.0;
  for (std::uint32_t k = 0; k < in.n; ++k) acc += weights[k] * load<In>(input_at<In>(in, k), i);
  store<Out>(out, i, acc / divisor);
}

// The sum of u_k^2 over elements [begin, end), in element order: one CPU reduction chunk.
template <DType T>
WAVG_HD inline double sum_squares_chunk(const Inputs& in, std::uint32_t k, std::uint64_t begin, std::uint64_t end) {
  double acc = 0;
  for (std::uint64_t i = begin; i < end; ++i) {
    const double u = update_at<T>(in, k, i);
    acc += u * u;
  }
  return acc;
}

// The sum of (y_j - y_l)^2 over elements [begin, end), in element order.
template <DType T>
WAVG_HD inline double sq_distance_chunk(const Inputs& in, const double* scales, std::uint32_t j, std::uint32_t l,
                                        std::uint64_t begin, std::uint64_t end) {
  double acc = 0;
  for (std::uint64_t i = begin; i < end; ++i) {
    const double diff = scales[j] * update_at<T>(in, j, i) - scales[l] * update_at<T>(in, l, i);
    acc += diff * diff;
  }
  return acc;
}

template <DType T>
WAVG_HD inline double combine_element(const Inputs& in, const double* coeffs, double divisor, std::uint64_t i) {
  double acc = 0;
  for (std::uint32_t k = 0; k < in.n; ++k) acc += coeffs[k] * update_at<T>(in, k, i);
  return acc / divisor;
}

// The CPU backend's order statistic for one element; `v` has room for N values.
template <DType T>
WAVG_HD inline double order_statistic_element(const Inputs& in, const double* scales, const double* weights,
                                              OrderStat stat, std::uint32_t trim, std::uint64_t i, Valued* v) {
  std::uint32_t m = 0;
  for (std::uint32_t k = 0; k < in.n; ++k) {
    if (stat == OrderStat::median && !(weights[k] > 0)) continue;
    v[m++] = {scales[k] * update_at<T>(in, k, i), weights[k], k};
  }
  sort_values(v, m);
  if (stat == OrderStat::trimmed_mean) {
    double acc = 0;
    for (std::uint32_t k = trim; k < in.n - trim; ++k) acc += v[k].value;
    return acc / static_cast<double>(in.n - 2 * trim);
  }
  return weighted_median(v, m);
}

}  // namespace wavg::cuda
