#include "wavg/tensor.hpp"

#include <limits>

namespace wavg {

std::uint64_t TensorInfo::count() const {
  std::uint64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string stored_name(const TensorInfo& t) {
  return t.stored_as.empty() ? std::string(dtype_name(t.dtype)) : t.stored_as;
}

std::string shape_string(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

bool checked_count(const Shape& shape, std::size_t element_size, std::uint64_t& count) {
  constexpr auto k_max = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t n = 1;
  for (auto d : shape) {
    if (d != 0 && n > k_max / d) return false;
    n *= d;
  }
  if (element_size != 0 && n > k_max / element_size) return false;
  count = n;
  return true;
}

}  // namespace wavg
