#pragma once
// A backend runs the element-wise kernels of the merge methods on one device. The CPU backend is the reference;
// every other backend must give bit-identical results for the mean and weighted mean.

#include <cstdint>
#include <memory>
#include <span>

#include "wavg/dtype.hpp"

namespace wavg {

// One block of one tensor from every input: N pointers to `count` elements of `dtype`.
struct BlockInputs {
  DType dtype = DType::f32;
  std::uint64_t count = 0;
  std::span<const void* const> data;
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
};

std::unique_ptr<Backend> make_cpu_backend();

}  // namespace wavg
