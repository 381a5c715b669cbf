#pragma once
// The output's size against the free space of the file system it goes to, checked before anything is written: a
// merge that would fill the disk fails at once with both numbers, instead of after writing until the disk is full
// (and filling it for every other program meanwhile).

#include <cstdint>
#include <string>
#include <vector>

#include "wavg/tensor.hpp"

namespace wavg {

// Throws Error (exit 1) naming `output` when `bytes` exceed what an unprivileged process may still write on the
// file system of `output`'s directory (statvfs f_bavail). A file system that cannot tell is not refused.
void check_free_space(const std::string& output, std::uint64_t bytes);

// Returns the bytes of the tensors' elements, which every format stores at least (saturating at UINT64_MAX).
std::uint64_t least_output_bytes(const std::vector<TensorInfo>& tensors);

}  // namespace wavg
