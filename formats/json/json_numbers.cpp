// The text of wavg JSON's numbers (json_text.hpp): the shortest decimal that reads back to the same bits, and its
// parsing, for every element type.

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "json/json_text.hpp"
#include "wavg/error.hpp"

namespace wavg::json {

namespace {

// The bit pattern of one float element, widened.
std::uint64_t float_bits(DType t, const void* e) {
  switch (t) {
    case DType::f16:
    case DType::bf16: {
      std::uint16_t b;
      std::memcpy(&b, e, 2);
      return b;
    }
    case DType::f32: {
      std::uint32_t b;
      std::memcpy(&b, e, 4);
      return b;
    }
    default: {
      std::uint64_t b;
      std::memcpy(&b, e, 8);
      return b;
    }
  }
}

void store_bits(DType t, std::uint64_t bits, void* e) {
  const std::size_t n = dtype_size(t);
  for (std::size_t i = 0; i < n; ++i) static_cast<unsigned char*>(e)[i] = static_cast<unsigned char>(bits >> (8 * i));
}

double to_double(DType t, const void* e) {
  switch (t) {
    case DType::f16: return half_to_double(static_cast<std::uint16_t>(float_bits(t, e)));
    case DType::bf16: return bf16_to_double(static_cast<std::uint16_t>(float_bits(t, e)));
    case DType::f32: {
      float f;
      std::memcpy(&f, e, 4);
      return f;
    }
    default: {
      double d;
      std::memcpy(&d, e, 8);
      return d;
    }
  }
}

// Rounds a double to `t` (the second step of the reading rule) and stores it.
void from_double(DType t, double d, void* e) {
  switch (t) {
    case DType::f16: store_bits(t, double_to_half(d), e); break;
    case DType::bf16: store_bits(t, double_to_bf16(d), e); break;
    case DType::f32: {
      const float f = static_cast<float>(d);
      std::memcpy(e, &f, 4);
      break;
    }
    default: std::memcpy(e, &d, 8); break;
  }
}

// The quiet NaN with no payload and a clear sign bit, written as plain "NaN".
std::uint64_t canonical_nan(DType t) {
  switch (t) {
    case DType::f16: return 0x7e00;
    case DType::bf16: return 0x7fc0;
    case DType::f32: return 0x7fc00000;
    default: return 0x7ff8000000000000;
  }
}

}  // namespace

void append_float(std::string& out, DType t, const void* element) {
  const std::uint64_t bits = float_bits(t, element);
  const double d = to_double(t, element);
  if (std::isnan(d)) {
    if (bits == canonical_nan(t)) {
      out += "\"NaN\"";
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, "\"NaN:0x%0*llx\"", static_cast<int>(2 * dtype_size(t)),
                    static_cast<unsigned long long>(bits));
      out += buf;
    }
    return;
  }
  if (std::isinf(d)) {
    out += d > 0 ? "\"Infinity\"" : "\"-Infinity\"";
    return;
  }
  char buf[64];
  std::to_chars_result r{};
  if (t == DType::f64) {
    r = std::to_chars(buf, buf + sizeof buf, d);
  } else if (t == DType::f32) {
    float f;
    std::memcpy(&f, element, 4);
    r = std::to_chars(buf, buf + sizeof buf, f);
    // The shortest float32 decimal is read through binary64; keep it only if that path gives the value back.
    double back = 0;
    std::from_chars(buf, r.ptr, back);
    if (static_cast<float>(back) != f) r = std::to_chars(buf, buf + sizeof buf, d);
  } else {
    // binary16 and bfloat16: the fewest significant digits that read back to the same bits. The exact value
    // (at most 17 digits as a double) always does, so the loop ends.
    for (int precision = 1; precision <= 17; ++precision) {
      r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::general, precision);
      double back = 0;
      std::from_chars(buf, r.ptr, back);
      unsigned char e[8] = {};
      from_double(t, back, e);
      if (float_bits(t, e) == bits) break;
    }
  }
  out.append(buf, r.ptr);
  // "-0" is an integer to many JSON readers (Python's json gives int 0) and would lose its sign.
  if (r.ptr - buf == 2 && buf[0] == '-' && buf[1] == '0') out += ".0";
}

bool parse_float_number(std::string_view text, DType t, void* element) {
  double d = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), d);
  // Out of range of binary64: from_chars reports it; the decimal still has a correctly rounded value, +-inf or
  // +-0, which is what strtod gives.
  if (r.ec == std::errc::result_out_of_range)
    d = std::strtod(std::string(text).c_str(), nullptr);
  else if (r.ec != std::errc() || r.ptr != text.data() + text.size())
    return false;
  from_double(t, d, element);
  return true;
}

bool parse_float_string(std::string_view text, DType t, void* element) {
  if (text == "NaN") {
    store_bits(t, canonical_nan(t), element);
    return true;
  }
  if (text == "Infinity" || text == "-Infinity") {
    from_double(t, text[0] == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity(),
                element);
    return true;
  }
  if (text.size() != 6 + 2 * dtype_size(t) || text.substr(0, 6) != "NaN:0x") return false;
  std::uint64_t bits = 0;
  for (char c : text.substr(6)) {
    const int h = hex_value(c);
    if (h < 0) return false;
    bits = (bits << 4) | static_cast<std::uint64_t>(h);
  }
  store_bits(t, bits, element);
  double d = to_double(t, element);
  return std::isnan(d);
}

bool parse_integer(std::string_view text, DType t, void* element) {
  const char* b = text.data();
  const char* e = b + text.size();
  auto store = [&](auto v, auto lo, auto hi) {
    if (v < lo || v > hi) return false;
    store_bits(t, static_cast<std::uint64_t>(v), element);
    return true;
  };
  if (t == DType::u64 || t == DType::u32 || t == DType::u16 || t == DType::u8) {
    std::uint64_t v = 0;
    const auto r = std::from_chars(b, e, v);
    if (r.ec != std::errc() || r.ptr != e) return false;
    const std::uint64_t hi = t == DType::u64 ? ~0ull : (1ull << (8 * dtype_size(t))) - 1;
    return store(v, 0ull, hi);
  }
  std::int64_t v = 0;
  const auto r = std::from_chars(b, e, v);
  if (r.ec != std::errc() || r.ptr != e) return false;
  if (t == DType::i64)
    return store(v, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
  const int bits = static_cast<int>(8 * dtype_size(t));
  const std::int64_t hi = (std::int64_t{1} << (bits - 1)) - 1;
  return store(v, -hi - 1, hi);
}

void append_integer(std::string& out, DType t, const void* element) {
  char buf[24];
  std::to_chars_result r{};
  const auto* p = static_cast<const unsigned char*>(element);
  std::uint64_t u = 0;
  for (std::size_t i = dtype_size(t); i-- > 0;) u = (u << 8) | p[i];
  switch (t) {
    case DType::i8: r = std::to_chars(buf, buf + sizeof buf, static_cast<std::int8_t>(u)); break;
    case DType::i16: r = std::to_chars(buf, buf + sizeof buf, static_cast<std::int16_t>(u)); break;
    case DType::i32: r = std::to_chars(buf, buf + sizeof buf, static_cast<std::int32_t>(u)); break;
    case DType::i64: r = std::to_chars(buf, buf + sizeof buf, static_cast<std::int64_t>(u)); break;
    default: r = std::to_chars(buf, buf + sizeof buf, u); break;
  }
  out.append(buf, r.ptr);
}

}  // namespace wavg::json
