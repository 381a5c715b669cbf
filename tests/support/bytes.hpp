#pragma once
// Little-endian bytes of numbers, and protobuf's wire format (varints, tags, fields), for tests that assemble
// files byte by byte.

#include <cstdint>
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

// Returns the base-128 varint of `v` (protobuf's).
inline std::string varint(std::uint64_t v) {
  std::string s;
  do {
    s += static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return s;
}
// Returns a protobuf field's tag: its number and wire type.
inline std::string tag(int field, int wire) {
  return varint(static_cast<std::uint64_t>(field) << 3 | static_cast<unsigned>(wire));
}
// Returns a length-delimited protobuf field (wire type 2).
inline std::string field(int number, const std::string& payload) {
  return tag(number, 2) + varint(payload.size()) + payload;
}
// Returns a varint protobuf field (wire type 0).
inline std::string number(int field_number, std::int64_t v) {
  return tag(field_number, 0) + varint(static_cast<std::uint64_t>(v));
}

}  // namespace wavg::test
