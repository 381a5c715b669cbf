#pragma once
// Stores a double as element i of a floating-point array of dtype t (float16, bfloat16, float32, float64), rounded
// by the conversions in wavg/dtype.hpp: how the backend tests lay out their random inputs.

#include <cstdint>
#include <cstring>

#include "wavg/dtype.hpp"

namespace wavg::test {

inline void store_float(DType t, unsigned char* p, std::uint64_t i, double v) {
  if (t == DType::f16) {
    const std::uint16_t h = double_to_half(v);
    std::memcpy(p + i * 2, &h, 2);
  } else if (t == DType::bf16) {
    const std::uint16_t h = double_to_bf16(v);
    std::memcpy(p + i * 2, &h, 2);
  } else if (t == DType::f32) {
    const float f = static_cast<float>(v);
    std::memcpy(p + i * 4, &f, 4);
  } else {
    std::memcpy(p + i * 8, &v, 8);
  }
}

}  // namespace wavg::test
