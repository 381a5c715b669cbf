#include "wavg/dtype.hpp"

#include <array>

#include "wavg/element_math.hpp"
#include "wavg/error.hpp"

namespace wavg {

namespace {

struct DTypeRow {
  DType type;
  std::size_t size;
  std::string_view name;
  std::string_view short_name;
};

constexpr std::array<DTypeRow, 13> k_dtypes{{
    {DType::f16, 2, "float16", "f16"},
    {DType::bf16, 2, "bfloat16", "bf16"},
    {DType::f32, 4, "float32", "f32"},
    {DType::f64, 8, "float64", "f64"},
    {DType::i8, 1, "int8", "i8"},
    {DType::i16, 2, "int16", "i16"},
    {DType::i32, 4, "int32", "i32"},
    {DType::i64, 8, "int64", "i64"},
    {DType::u8, 1, "uint8", "u8"},
    {DType::u16, 2, "uint16", "u16"},
    {DType::u32, 4, "uint32", "u32"},
    {DType::u64, 8, "uint64", "u64"},
    {DType::boolean, 1, "bool", "bool"},
}};

const DTypeRow& row(DType t) {
  const auto i = static_cast<std::size_t>(t);
  WAVG_ASSERT(i < k_dtypes.size() && k_dtypes[i].type == t);
  return k_dtypes[i];
}

}  // namespace

std::size_t dtype_size(DType t) { return row(t).size; }
std::string_view dtype_name(DType t) { return row(t).name; }
std::string_view dtype_short_name(DType t) { return row(t).short_name; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& r : k_dtypes)
    if (r.name == name || r.short_name == name) return r.type;
  return std::nullopt;
}

bool is_float(DType t) { return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64; }

std::uint16_t double_to_half(double value) { return static_cast<std::uint16_t>(round_to_small_float(value, 5, 10)); }
std::uint16_t double_to_bf16(double value) { return static_cast<std::uint16_t>(round_to_small_float(value, 8, 7)); }
double half_to_double(std::uint16_t bits) { return small_float_to_double(bits, 5, 10); }
double bf16_to_double(std::uint16_t bits) { return small_float_to_double(bits, 8, 7); }

}  // namespace wavg
