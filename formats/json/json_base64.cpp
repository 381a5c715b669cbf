// Standard base64 for wavg JSON's "encoding": "base64" tensors (json_text.hpp).

#include "json/json_text.hpp"

namespace wavg::json {

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
