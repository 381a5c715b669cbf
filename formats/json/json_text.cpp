#include "json/json_text.hpp"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "wavg/error.hpp"

namespace wavg::json {

namespace {


bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

// Returns the length of the well-formed UTF-8 sequence at `s` (RFC 3629), or 0.
std::size_t utf8_length(const unsigned char* s, std::size_t n) {
  const unsigned char c = s[0];
  std::size_t len = 0;
  std::uint32_t cp = 0;
  if ((c & 0xe0) == 0xc0) { len = 2; cp = c & 0x1f; }
  else if ((c & 0xf0) == 0xe0) { len = 3; cp = c & 0x0f; }
  else if ((c & 0xf8) == 0xf0) { len = 4; cp = c & 0x07; }
  else return 0;
  if (n < len) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((s[k] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (s[k] & 0x3f);
  }
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return len;
}

// The bit pattern of one float element, widened.
std::uint64_t float_bits(DType t, const void* e) {
  switch (t) {
    case DType::f16: case DType::bf16: { std::uint16_t b; std::memcpy(&b, e, 2); return b; }
    case DType::f32: { std::uint32_t b; std::memcpy(&b, e, 4); return b; }
    default: { std::uint64_t b; std::memcpy(&b, e, 8); return b; }
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
    case DType::f32: { float f; std::memcpy(&f, e, 4); return f; }
    default: { double d; std::memcpy(&d, e, 8); return d; }
  }
}

// Rounds a double to `t` (the second step of the reading rule) and stores it.
void from_double(DType t, double d, void* e) {
  switch (t) {
    case DType::f16: store_bits(t, double_to_half(d), e); break;
    case DType::bf16: store_bits(t, double_to_bf16(d), e); break;
    case DType::f32: { const float f = static_cast<float>(d); std::memcpy(e, &f, 4); break; }
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

void Cursor::error(const std::string& what) const {
  fail(m_path, "wavg JSON: " + what + " (at byte " + std::to_string(offset()) + ")");
}

char Cursor::peek() {
  while (m_at < m_end && is_ws(*m_at)) ++m_at;
  return m_at < m_end ? *m_at : '\0';
}

void Cursor::expect(char c, const char* what) {
  if (peek() != c) error(std::string("expected ") + what);
  ++m_at;
}

bool Cursor::consume(char c) {
  if (peek() != c) return false;
  ++m_at;
  return true;
}

bool Cursor::next_item(char close, bool& first) {
  if (first) {
    first = false;
    return !consume(close);
  }
  if (consume(',')) return true;
  if (close == ']') expect(']', "',' or ']'");
  else expect('}', "',' or '}'");
  return false;
}

void Cursor::expect_end() {
  if (peek() != '\0') error("text after the end of the document");
}

std::string Cursor::string() {
  expect('"', "a string");
  std::string out;
  for (;;) {
    // Copy the plain run in one go: the common case for names and base64.
    const char* run = m_at;
    while (m_at < m_end && *m_at != '"' && *m_at != '\\' && static_cast<unsigned char>(*m_at) >= 0x20 &&
           static_cast<unsigned char>(*m_at) < 0x80)
      ++m_at;
    out.append(run, m_at);
    if (m_at == m_end) error("unterminated string");
    const unsigned char c = static_cast<unsigned char>(*m_at);
    if (c == '"') {
      ++m_at;
      return out;
    }
    if (c < 0x20) error("control character in a string");
    if (c >= 0x80) {
      const std::size_t len = utf8_length(reinterpret_cast<const unsigned char*>(m_at), remaining());
      if (len == 0) error("invalid UTF-8 in a string");
      out.append(m_at, len);
      m_at += len;
      continue;
    }
    // An escape.
    if (remaining() < 2) error("unterminated string");
    const char e = m_at[1];
    m_at += 2;
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        auto hex4 = [&]() -> std::uint32_t {
          if (remaining() < 4) error("truncated \\u escape");
          std::uint32_t v = 0;
          for (int i = 0; i < 4; ++i) {
            const int h = hex_value(m_at[i]);
            if (h < 0) error("bad \\u escape");
            v = (v << 4) | static_cast<std::uint32_t>(h);
          }
          m_at += 4;
          return v;
        };
        std::uint32_t cp = hex4();
        if (cp >= 0xdc00 && cp <= 0xdfff) error("unpaired surrogate in a string");
        if (cp >= 0xd800 && cp <= 0xdbff) {
          if (remaining() < 2 || m_at[0] != '\\' || m_at[1] != 'u') error("unpaired surrogate in a string");
          m_at += 2;
          const std::uint32_t lo = hex4();
          if (lo < 0xdc00 || lo > 0xdfff) error("unpaired surrogate in a string");
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        }
        append_utf8(out, cp);
        break;
      }
      default: error("bad escape in a string");
    }
  }
}

std::string_view Cursor::number() {
  peek();
  const char* start = m_at;
  const char* p = m_at;
  if (p < m_end && *p == '-') ++p;
  if (p == m_end || !is_digit(*p)) error("expected a number");
  if (*p == '0') ++p;
  else while (p < m_end && is_digit(*p)) ++p;
  if (p < m_end && *p == '.') {
    ++p;
    if (p == m_end || !is_digit(*p)) error("bad number");
    while (p < m_end && is_digit(*p)) ++p;
  }
  if (p < m_end && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p < m_end && (*p == '+' || *p == '-')) ++p;
    if (p == m_end || !is_digit(*p)) error("bad number");
    while (p < m_end && is_digit(*p)) ++p;
  }
  m_at = p;
  return {start, static_cast<std::size_t>(p - start)};
}

void Cursor::literal(std::string_view word) {
  if (remaining() < word.size() || std::memcmp(m_at, word.data(), word.size()) != 0)
    error("expected " + std::string(word));
  m_at += word.size();
}

bool Cursor::boolean() {
  const char c = peek();
  if (c == 't') { literal("true"); return true; }
  if (c == 'f') { literal("false"); return false; }
  error("expected true or false");
}

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
  if (r.ec == std::errc::result_out_of_range) d = std::strtod(std::string(text).c_str(), nullptr);
  else if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return false;
  from_double(t, d, element);
  return true;
}

bool parse_float_string(std::string_view text, DType t, void* element) {
  if (text == "NaN") { store_bits(t, canonical_nan(t), element); return true; }
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
  if (t == DType::i64) return store(v, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
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

namespace {
constexpr char k_b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// A table instead of comparisons: decoding is the inner loop of reading a base64 document.
struct B64Table {
  signed char v[256];
  constexpr B64Table() : v() {
    for (int i = 0; i < 256; ++i) v[i] = -1;
    for (int i = 0; i < 64; ++i) v[static_cast<unsigned char>(k_b64[i])] = static_cast<signed char>(i);
  }
};
constexpr B64Table k_b64_table;

int b64_value(char c) { return k_b64_table.v[static_cast<unsigned char>(c)]; }
}  // namespace

void append_base64(std::string& out, const unsigned char* data, std::size_t size) {
  std::size_t i = 0;
  for (; i + 3 <= size; i += 3) {
    const std::uint32_t v = (std::uint32_t{data[i]} << 16) | (std::uint32_t{data[i + 1]} << 8) | data[i + 2];
    out += k_b64[v >> 18];
    out += k_b64[(v >> 12) & 63];
    out += k_b64[(v >> 6) & 63];
    out += k_b64[v & 63];
  }
  if (size - i == 1) {
    const std::uint32_t v = std::uint32_t{data[i]} << 16;
    out += k_b64[v >> 18];
    out += k_b64[(v >> 12) & 63];
    out += "==";
  } else if (size - i == 2) {
    const std::uint32_t v = (std::uint32_t{data[i]} << 16) | (std::uint32_t{data[i + 1]} << 8);
    out += k_b64[v >> 18];
    out += k_b64[(v >> 12) & 63];
    out += k_b64[(v >> 6) & 63];
    out += '=';
  }
}

bool decode_base64(std::string_view text, unsigned char* out, std::size_t size) {
  if (text.size() % 4 != 0 || text.size() / 4 != (size + 2) / 3) return false;
  const std::size_t pad = size % 3 == 0 ? 0 : 3 - size % 3;
  std::size_t o = 0;
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      const bool padded = last && k >= 4 - pad;
      if (padded) {
        if (c != '=') return false;
        v <<= 6;
        continue;
      }
      const int b = b64_value(c);
      if (b < 0) return false;
      v = (v << 6) | static_cast<std::uint32_t>(b);
    }
    for (int k = 0; k < 3 && o < size; ++k) out[o++] = static_cast<unsigned char>(v >> (16 - 8 * k));
  }
  return true;
}

}  // namespace wavg::json
