#include "wavg/tensor.hpp"

#include <limits>

#include "wavg/error.hpp"

namespace wavg {

std::uint64_t TensorInfo::count() const {
  std::uint64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string stored_name(const TensorInfo& t) {
  return t.stored_as.empty() ? element_type_name(t) : t.stored_as;
}

TensorInfo complex_tensor(std::string name, DType part, Shape shape) {
  WAVG_ASSERT(part == DType::f32 || part == DType::f64);
  shape.push_back(2);
  TensorInfo t{std::move(name), part, std::move(shape)};
  t.numbers = Numbers::complex;
  return t;
}

std::string element_type_name(const TensorInfo& t) {
  if (t.numbers == Numbers::real) return std::string(dtype_name(t.dtype));
  return t.dtype == DType::f64 ? "complex128" : t.dtype == DType::f32 ? "complex64" : "complex " + std::string(dtype_name(t.dtype));
}

Shape stored_shape(const TensorInfo& t) {
  if (t.numbers == Numbers::real || t.shape.empty()) return t.shape;
  return Shape(t.shape.begin(), t.shape.end() - 1);
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
