// Tensor values as doubles (lora_values.hpp).

#include "lora_values.hpp"

#include <cstring>

namespace wavg {

namespace {

// Each of the `count` elements of type Raw at `src` converted by `convert`: the dtype's switch taken once, not per
// element.
template <typename Raw, typename Convert>
void each(const unsigned char* src, std::uint64_t count, double* out, Convert convert) {
  for (std::uint64_t i = 0; i < count; ++i) {
    Raw r;
    std::memcpy(&r, src + i * sizeof(Raw), sizeof(Raw));
    out[i] = convert(r);
  }
}

template <typename Raw, typename Convert>
void each_out(const double* v, std::uint64_t count, unsigned char* dst, Convert convert) {
  for (std::uint64_t i = 0; i < count; ++i) {
    const Raw r = convert(v[i]);
    std::memcpy(dst + i * sizeof(Raw), &r, sizeof(Raw));
  }
}

}  // namespace

std::vector<double> read_values(Reader& r, std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const DType dtype = r.tensors()[index].dtype;
  std::vector<double> out(count);
  if (dtype == DType::f64) {
    r.read(index, offset, count, out.data());
    return out;
  }
  std::vector<unsigned char> raw(count * dtype_size(dtype));
  r.read(index, offset, count, raw.data());
  if (dtype == DType::f32)
    each<float>(raw.data(), count, out.data(), [](float f) { return static_cast<double>(f); });
  else if (dtype == DType::f16)
    each<std::uint16_t>(raw.data(), count, out.data(), half_to_double);
  else
    each<std::uint16_t>(raw.data(), count, out.data(), bf16_to_double);
  return out;
}

void store_values(const double* v, std::uint64_t count, DType dtype, void* dst) {
  auto* out = static_cast<unsigned char*>(dst);
  if (dtype == DType::f64)
    std::memcpy(out, v, count * 8);
  else if (dtype == DType::f32)
    each_out<float>(v, count, out, [](double d) { return static_cast<float>(d); });
  else if (dtype == DType::f16)
    each_out<std::uint16_t>(v, count, out, double_to_half);
  else
    each_out<std::uint16_t>(v, count, out, double_to_bf16);
}

Mat read_matrix(Reader& r, std::size_t index) {
  const TensorInfo& t = r.tensors()[index];
  const std::vector<double> v = read_values(r, index, 0, t.count());
  return Eigen::Map<const RowMat>(v.data(), static_cast<Eigen::Index>(t.shape[0]),
                                  static_cast<Eigen::Index>(t.shape[1]));
}

}  // namespace wavg
