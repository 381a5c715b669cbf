// TensorFlow's DataType numbers and the scalar DT_STRING encoding (see tf_dtype.hpp).

#include "tensorflow/tf_dtype.hpp"

#include <array>
#include <cstring>
#include <utility>

#include "common/byte_cursor.hpp"
#include "tensorflow/crc32c.hpp"

namespace wavg {

namespace {

struct Row {
  int number;
  const char* name;
  TfKind kind;
  DType dtype;
};

constexpr std::array<Row, 24> k_types{{
    {1, "DT_FLOAT", TfKind::number, DType::f32},     {2, "DT_DOUBLE", TfKind::number, DType::f64},
    {3, "DT_INT32", TfKind::number, DType::i32},     {4, "DT_UINT8", TfKind::number, DType::u8},
    {5, "DT_INT16", TfKind::number, DType::i16},     {6, "DT_INT8", TfKind::number, DType::i8},
    {7, "DT_STRING", TfKind::string, DType::u8},     {8, "DT_COMPLEX64", TfKind::refused, DType::f32},
    {9, "DT_INT64", TfKind::number, DType::i64},     {10, "DT_BOOL", TfKind::number, DType::boolean},
    {11, "DT_QINT8", TfKind::refused, DType::f32},   {12, "DT_QUINT8", TfKind::refused, DType::f32},
    {13, "DT_QINT32", TfKind::refused, DType::f32},  {14, "DT_BFLOAT16", TfKind::number, DType::bf16},
    {15, "DT_QINT16", TfKind::refused, DType::f32},  {16, "DT_QUINT16", TfKind::refused, DType::f32},
    {17, "DT_UINT16", TfKind::number, DType::u16},   {18, "DT_COMPLEX128", TfKind::refused, DType::f32},
    {19, "DT_HALF", TfKind::number, DType::f16},     {20, "DT_RESOURCE", TfKind::refused, DType::f32},
    {21, "DT_VARIANT", TfKind::refused, DType::f32}, {22, "DT_UINT32", TfKind::number, DType::u32},
    {23, "DT_UINT64", TfKind::number, DType::u64},   {0, "DT_INVALID", TfKind::refused, DType::f32},
}};

}  // namespace

TfType tf_type(int datatype) {
  for (const Row& r : k_types)
    if (r.number == datatype) return {r.kind, r.dtype, r.name};
  return {TfKind::refused, DType::f32, "number " + std::to_string(datatype)};
}

int tf_datatype(DType dtype) {
  for (const Row& r : k_types)
    if (r.kind == TfKind::number && r.dtype == dtype) return r.number;
  return 0;
}

std::string tf_scalar_string(const unsigned char* p, std::uint64_t size) {
  // Verified already: one varint length, 4 checksum bytes, then exactly that many bytes.
  const unsigned char* at = p;
  std::uint64_t length = 0;
  if (!decode_varint(at, p + size, length)) return std::string();
  const std::uint64_t header = static_cast<std::uint64_t>(at - p) + 4;
  return header <= size ? std::string(reinterpret_cast<const char*>(p) + header, size - header) : std::string();
}

std::string tf_encode_scalar_string(const std::string& value, std::uint32_t& crc) {
  std::string out;
  std::uint64_t n = value.size();
  do {
    out.push_back(static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0)));
    n >>= 7;
  } while (n);
  crc = 0;
  if (value.size() <= 0xffffffffu) {
    const auto n32 = static_cast<std::uint32_t>(value.size());
    crc = crc32c::extend(crc, &n32, 4);
  } else {
    const std::uint64_t n64 = value.size();
    crc = crc32c::extend(crc, &n64, 8);
  }
  const std::uint32_t length_crc = crc32c::mask(crc);
  char bytes[4];
  std::memcpy(bytes, &length_crc, 4);
  out.append(bytes, 4);
  crc = crc32c::extend(crc, bytes, 4);
  out += value;
  crc = crc32c::extend(crc, value.data(), value.size());
  return out;
}

}  // namespace wavg
