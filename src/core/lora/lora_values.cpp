// Tensor values as doubles (lora_values.hpp).

#include "lora_values.hpp"

#include <cstring>

namespace wavg {

std::vector<double> read_values(Reader& r, std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const DType dtype = r.tensors()[index].dtype;
  std::vector<unsigned char> raw(count * dtype_size(dtype));
  r.read(index, offset, count, raw.data());
  std::vector<double> out(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const unsigned char* p = raw.data() + i * dtype_size(dtype);
    if (dtype == DType::f64) {
      std::memcpy(&out[i], p, 8);
    } else if (dtype == DType::f32) {
      float f;
      std::memcpy(&f, p, 4);
      out[i] = f;
    } else {
      std::uint16_t h;
      std::memcpy(&h, p, 2);
      out[i] = dtype == DType::f16 ? half_to_double(h) : bf16_to_double(h);
    }
  }
  return out;
}

void store_values(const double* v, std::uint64_t count, DType dtype, void* dst) {
  auto* out = static_cast<unsigned char*>(dst);
  for (std::uint64_t i = 0; i < count; ++i) {
    unsigned char* p = out + i * dtype_size(dtype);
    if (dtype == DType::f64) {
      std::memcpy(p, &v[i], 8);
    } else if (dtype == DType::f32) {
      const auto f = static_cast<float>(v[i]);
      std::memcpy(p, &f, 4);
    } else {
      const std::uint16_t h = dtype == DType::f16 ? double_to_half(v[i]) : double_to_bf16(v[i]);
      std::memcpy(p, &h, 2);
    }
  }
}

Mat read_matrix(Reader& r, std::size_t index) {
  const TensorInfo& t = r.tensors()[index];
  const std::vector<double> v = read_values(r, index, 0, t.count());
  return Eigen::Map<const RowMat>(v.data(), static_cast<Eigen::Index>(t.shape[0]),
                                  static_cast<Eigen::Index>(t.shape[1]));
}

}  // namespace wavg
