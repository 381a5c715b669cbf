#pragma once
// Little-endian bytes of numbers, for tests that assemble files byte by byte.

#include <cstring>
#include <initializer_list>
#include <string>

namespace wavg::test {

// Returns the bytes of `v` as the (little-endian) host stores them.
template <typename T>
std::string le_bytes(T v) {
  std::string s(sizeof v, '\0');
  std::memcpy(s.data(), &v, sizeof v);
  return s;
}

// Returns float32 values back to back.
inline std::string f32_bytes(std::initializer_list<float> values) {
  std::string s;
  for (float v : values) s += le_bytes(v);
  return s;
}

}  // namespace wavg::test
