#pragma once
// Element types wavg knows, and exact conversions between them and double, the accumulator type.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace wavg {

enum class DType : std::uint8_t { f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, boolean };

// Returns the size of one element in bytes.
std::size_t dtype_size(DType t);
// Returns the lower-case name used in messages and JSON (float32, int64, bool, ...).
std::string_view dtype_name(DType t);
// Returns the short form of the name (f16, bf16, i32, ...; bool for boolean).
std::string_view dtype_short_name(DType t);
// Parses a name as printed by dtype_name; also accepts the short forms f16, bf16, f32, f64.
std::optional<DType> dtype_from_name(std::string_view name);
// Tells whether values of this type are averaged (floating point) or follow --int-policy.
bool is_float(DType t);

// Rounds a double to the nearest IEEE binary16 / bfloat16 value, ties to even, in one step (no double rounding
// through float). NaN stays NaN, overflow becomes infinity.
std::uint16_t double_to_half(double value);
std::uint16_t double_to_bf16(double value);
double half_to_double(std::uint16_t bits);
double bf16_to_double(std::uint16_t bits);

}  // namespace wavg
