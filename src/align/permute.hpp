#pragma once
// Applying permutations to tensors: index maps per axis and an N-dimensional gather, shared by weight matching
// (B's other axes) and by the readers and weights it produces.

#include <cstdint>
#include <vector>

#include "wavg/align.hpp"

namespace wavg::align {

using IndexMap = std::vector<std::uint64_t>;  // source position of every destination position; empty: identity

// Returns the index map `axis` gives an axis of `length` entries under `perms`.
IndexMap axis_map(const AxisPerm& axis, const std::vector<Perm>& perms, std::uint64_t length);

// Sets dst[i0, i1, ...] = src[map0[i0], map1[i1], ...] for elements of `elem` bytes.
void permute_bytes(const unsigned char* src, unsigned char* dst, const Shape& shape, std::size_t elem,
                   const std::vector<IndexMap>& maps);

// Returns the index maps of every axis of a tensor but `except_axis` (pass shape.size() for all of them).
std::vector<IndexMap> tensor_maps(const TensorPerm& tp, const Shape& shape, const std::vector<Perm>& perms,
                                  std::size_t except_axis);

// Returns the identity permutation of n units.
Perm identity(std::uint64_t n);

}  // namespace wavg::align
