#pragma once
// How far two checkpoints are apart, tensor by tensor: what researchers look at to see how far replicas or
// federated clients drifted. Computed in double, streaming block by block, with a summation order fixed by the
// reduction chunk (element_math.hpp), so the numbers are the same bits for any thread count.

#include <cstdint>
#include <string>
#include <vector>

#include "wavg/format.hpp"
#include "wavg/plan.hpp"

namespace wavg {

// The sums one pass gathers for a floating-point tensor (or a set of them): everything the distances derive from.
struct DistanceSums {
  double diff_sq = 0;  // sum of (a - b)^2
  double a_sq = 0;     // sum of a^2
  double b_sq = 0;     // sum of b^2
  double dot = 0;      // sum of a * b
  double max_abs = 0;  // largest |a - b|; NaN when any difference is NaN
  std::uint64_t values = 0;

  // Adds another tensor's sums (totals over the model).
  void add(const DistanceSums& other);
  // Returns sqrt(diff_sq): the L2 distance.
  double l2() const;
  // Returns |A - B| / |A|: 0 when both are zero, infinity when only A is.
  double relative() const;
  // Returns the cosine similarity of A and B; NaN when either is all zeros.
  double cosine() const;
};

struct TensorDiff {
  PlanEntry entry;  // the tensor as in A, with its source index in A and B
  bool is_float = false;
  DistanceSums sums;            // floating-point tensors
  std::uint64_t differing = 0;  // other tensors: elements whose bytes differ
};

struct ModelDiff {
  std::vector<TensorDiff> tensors;  // A's order
  DistanceSums total;               // over every floating-point tensor
};

// Compares every tensor the plan pairs between `a` and `b` (the plan of exactly these two inputs).
ModelDiff diff_models(const Plan& plan, Reader& a, Reader& b, std::uint64_t block_bytes = 64ull << 20);

}  // namespace wavg
