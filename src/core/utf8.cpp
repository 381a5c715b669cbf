#include "wavg/utf8.hpp"

#include <cstdint>

namespace wavg {

std::size_t utf8_sequence_length(const unsigned char* s, std::size_t n) {
  const unsigned char c = s[0];
  std::size_t len = 0;
  std::uint32_t cp = 0;
  if ((c & 0xe0) == 0xc0) {
    len = 2;
    cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3;
    cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4;
    cp = c & 0x07;
  } else
    return 0;
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

bool valid_utf8(const unsigned char* s, std::size_t n) {
  for (std::size_t i = 0; i < n;) {
    if (s[i] < 0x80) {
      ++i;
      continue;
    }
    const std::size_t len = utf8_sequence_length(s + i, n - i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

}  // namespace wavg
