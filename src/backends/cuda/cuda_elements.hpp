#pragma once
// The per-element arithmetic of the CUDA kernels, as __host__ __device__ functions so the same source runs on the
// GPU and in a host test (tests/backends/test_cuda_elements.cpp) that compares it with the CPU backend bit for bit
// on a machine without a GPU. The federated formulas are element_math.hpp's, shared with the CPU backend, read
// through the Strided accessor; weighted_sum_element does the IEEE operations of its CPU counterpart in the same
// order. The .cu files are compiled with -fmad=false so nvcc does not fuse a*b+c where g++ (-ffp-contract=off)
// does not. Division and sqrt are correctly rounded on both (nvcc's default -prec-div=true -prec-sqrt=true).
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
using wavg::update_at;
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

template <DType T>
WAVG_HD inline const void* input_at(const Inputs& in, std::uint32_t k) {
  return static_cast<const typename Storage<T>::type*>(in.data) + k * in.stride;
}

// The federated formulas' accessor (element_math.hpp) over a chunk's inputs of dtype T in one strided buffer.
template <DType T>
struct Strided {
  Inputs in;
  WAVG_HD std::uint32_t n() const { return in.n; }
  WAVG_HD double update(std::uint32_t k, std::uint64_t i) const { return update_at<T>(input_at<T>(in, k), in.base, i); }
};

// Backend::weighted_sum for one element: 0 + w_1 x_1 + w_2 x_2 + ..., divided once, rounded once.
template <DType In, DType Out>
WAVG_HD inline void weighted_sum_element(const Inputs& in, const double* weights, double divisor, void* out,
                                         std::uint64_t i) {
  double acc = 0.0;
  for (std::uint32_t k = 0; k < in.n; ++k) acc += weights[k] * load<In>(input_at<In>(in, k), i);
  store<Out>(out, i, acc / divisor);
}

}  // namespace wavg::cuda
