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
using wavg::agrees_with;
using wavg::k_reduce_chunk;
using wavg::k_sum_lanes;
using wavg::kept_at_random;
using wavg::load;
using wavg::mask_stream;
using wavg::Philox4x32;
using wavg::philox_block;
using wavg::sparsified;
using wavg::Storage;
using wavg::store;
using wavg::sum_lanes_total;
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

// The task-vector kernels for one element or one reduction chunk, in the CPU's order of operations (cpu_task.cpp)
// and with its rules (element_math.hpp). `index` is the element's index in its tensor (offset + i).

// Input k's weighted, sparsified task-vector entry at element i; `block` holds the Philox block of inputs
// 4 * (k / 4) .. + 3 and is drawn afresh at every fourth input.
template <DType T>
WAVG_HD inline double weighted_task_entry(const Inputs& in, const TaskCombineParams& p, std::uint32_t k,
                                          std::uint64_t i, std::uint64_t index, Philox4x32& block) {
  if (p.sparsify == Sparsify::random && k % 4 == 0) block = philox_block(p.seed, mask_stream(p.stream, k), index);
  return p.weights[k] * sparsified(p, k, update_at<T>(input_at<T>(in, k), in.base, i), index, block.v[k % 4]);
}

// Backend::task_combine for one element: the entries summed in input order; with sign consensus a second pass
// (drawing the same values again rather than keeping N of them per thread) sums the agreeing entries and their
// weights.
template <DType T, DType O>
WAVG_HD inline void task_combine_element(const Inputs& in, const TaskCombineParams& p, std::uint64_t offset, void* out,
                                         std::uint64_t i) {
  const std::uint64_t index = offset + i;
  Philox4x32 block{};
  double sum = 0.0;
  for (std::uint32_t k = 0; k < in.n; ++k) sum += weighted_task_entry<T>(in, p, k, i, index, block);
  double result = sum;
  if (p.consensus == Consensus::sign) {
    double agreeing = 0.0, divisor = 0.0;
    for (std::uint32_t k = 0; k < in.n; ++k) {
      const double wt = weighted_task_entry<T>(in, p, k, i, index, block);
      agreeing = agrees_with(wt, sum) ? agreeing + wt : agreeing;
      divisor = agrees_with(wt, sum) ? divisor + p.weights[k] : divisor;
    }
    result = p.normalize == Normalize::yes ? agreeing / (divisor == 0 ? 1.0 : divisor) : agreeing;
  } else if (p.normalize == Normalize::yes) {
    double divisor = 0;
    for (std::uint32_t k = 0; k < in.n; ++k) divisor += p.weights[k];
    if (std::fabs(divisor) < 1e-8) divisor = 1;
    result = sum / divisor;
  }
  const double base = in.base ? load<T>(in.base, i) : 0.0;
  store<O>(out, i, base + p.lambda * result);
}

// Backend::random_mask_l1 over elements [begin, end) (one reduction chunk) of input k: its L1 norm and the L1 norm
// of what the drop mask keeps, each in k_sum_lanes lanes as the CPU sums them, into l1[0] and l1[1].
template <DType T>
WAVG_HD inline void random_mask_l1_chunk(const Inputs& in, const TaskCombineParams& p, std::uint64_t offset,
                                         std::uint32_t k, std::uint64_t begin, std::uint64_t end, double* l1) {
  double total[k_sum_lanes] = {}, kept[k_sum_lanes] = {};
  const double density = p.densities ? p.densities[k] : p.density;
  for (std::uint64_t i = begin; i < end; ++i) {
    const double m = std::fabs(update_at<T>(input_at<T>(in, k), in.base, i));
    const std::uint32_t word = philox_block(p.seed, mask_stream(p.stream, k), offset + i).v[k % 4];
    total[(i - begin) % k_sum_lanes] += m;
    kept[(i - begin) % k_sum_lanes] += kept_at_random(word, density) ? m : 0.0;
  }
  l1[0] = sum_lanes_total(total);
  l1[1] = sum_lanes_total(kept);
}

// Backend::update_gram's sum of u_j * u_l over elements [begin, end), one chain in element order.
template <DType T>
WAVG_HD inline double gram_chunk(const Inputs& in, std::uint32_t j, std::uint32_t l, std::uint64_t begin,
                                 std::uint64_t end) {
  double acc = 0.0;
  for (std::uint64_t i = begin; i < end; ++i)
    acc += update_at<T>(input_at<T>(in, j), in.base, i) * update_at<T>(input_at<T>(in, l), in.base, i);
  return acc;
}

}  // namespace wavg::cuda
