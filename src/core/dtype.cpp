#include "wavg/dtype.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>

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

// Rounds a double to a binary float with `exp_bits` exponent and `mant_bits` explicit mantissa bits, ties to even,
// returning the bit pattern (sign in bit exp_bits + mant_bits). Working from the double's bits rounds exactly once:
// going through float first would round twice and can be off by one ulp at ties.
std::uint32_t round_to_small_float(double value, int exp_bits, int mant_bits) {
  const auto bits = std::bit_cast<std::uint64_t>(value);
  const std::uint32_t sign = static_cast<std::uint32_t>(bits >> 63) << (exp_bits + mant_bits);
  const std::uint64_t magnitude = bits & 0x7fff'ffff'ffff'ffffull;
  const std::uint32_t exp_all_ones = (1u << exp_bits) - 1;
  const std::uint32_t infinity = exp_all_ones << mant_bits;
  if (magnitude >= 0x7ff0'0000'0000'0000ull) {
    if (magnitude == 0x7ff0'0000'0000'0000ull) return sign | infinity;
    // NaN: quiet, keeping the top payload bits.
    const auto payload = static_cast<std::uint32_t>((magnitude & 0x000f'ffff'ffff'ffffull) >> (52 - mant_bits));
    return sign | infinity | (1u << (mant_bits - 1)) | payload;
  }
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int exponent = static_cast<int>(magnitude >> 52) - 1023;
  const std::uint64_t significand = (magnitude & 0x000f'ffff'ffff'ffffull) | (1ull << 52);
  if (exponent > bias) return sign | infinity;
  const int min_normal = 1 - bias;
  // Normal results keep the exponent field; subnormal results are multiples of 2^(min_normal - mant_bits).
  int shift = 52 - mant_bits;
  std::uint64_t base = 0;
  if (exponent >= min_normal) {
    base = static_cast<std::uint64_t>(exponent + bias) << mant_bits;
  } else {
    shift += min_normal - exponent;
    if (shift >= 64) return sign;  // far below half the smallest subnormal
  }
  const std::uint64_t kept = exponent >= min_normal ? (significand & 0x000f'ffff'ffff'ffffull) >> shift
                                                    : significand >> shift;
  const std::uint64_t rest = significand & ((1ull << shift) - 1);
  const std::uint64_t half = 1ull << (shift - 1);
  std::uint64_t result = base + kept;
  if (rest > half || (rest == half && (result & 1u))) ++result;  // a carry into the exponent is correct rounding
  return sign | static_cast<std::uint32_t>(result);
}

double small_float_to_double(std::uint32_t bits, int exp_bits, int mant_bits) {
  const bool negative = (bits >> (exp_bits + mant_bits)) & 1u;
  const std::uint32_t exp_field = (bits >> mant_bits) & ((1u << exp_bits) - 1);
  const std::uint32_t mant = bits & ((1u << mant_bits) - 1);
  const int bias = (1 << (exp_bits - 1)) - 1;
  double v = 0;
  if (exp_field == (1u << exp_bits) - 1) {
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exp_field == 0) {
    v = std::ldexp(static_cast<double>(mant), 1 - bias - mant_bits);
  } else {
    v = std::ldexp(static_cast<double>(mant | (1u << mant_bits)), static_cast<int>(exp_field) - bias - mant_bits);
  }
  return negative ? -v : v;
}

}  // namespace

std::size_t dtype_size(DType t) { return row(t).size; }
std::string_view dtype_name(DType t) { return row(t).name; }

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
