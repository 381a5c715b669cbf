#pragma once
// What a codec tells about one tensor: its full name, element type and shape.

#include <cstdint>
#include <string>
#include <vector>

#include "wavg/dtype.hpp"

namespace wavg {

using Shape = std::vector<std::uint64_t>;

struct TensorInfo {
  std::string name;  // full path inside the checkpoint, e.g. model_weights/dense/dense/kernel:0
  DType dtype = DType::f32;
  Shape shape;       // empty for a scalar

  // Returns the number of elements (1 for a scalar). Readers check the product for overflow when they build it.
  std::uint64_t count() const;
  std::uint64_t bytes() const { return count() * dtype_size(dtype); }
};

// Formats a shape the way messages and `inspect` print it: "(4, 8)", "()" for a scalar.
std::string shape_string(const Shape& shape);

// Multiplies the dimensions, or returns false when the product (in elements or bytes) overflows 64 bits.
bool checked_count(const Shape& shape, std::size_t element_size, std::uint64_t& count);

}  // namespace wavg
