// CRC-32C by slicing: table[k][b] is the CRC of byte b followed by k zero bytes, so eight bytes are folded in with
// eight look-ups (see crc32c.hpp for why it is hand-written). x86-64 processors since 2008 have an instruction for
// exactly this polynomial (SSE 4.2 crc32), run here over three streams at once; it is used when the processor has
// it, and the tables stay the reference everywhere else (the unit test checks both against the published values
// and each other).

#include "tensorflow/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace wavg::crc32c {

namespace {

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    t[0][b] = c;
  }
  for (std::size_t k = 1; k < 8; ++k)
    for (std::size_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  return t;
}

constexpr Tables k_tables = make_tables();

#if defined(__x86_64__)
// The instruction has a latency of three cycles but starts one per cycle, so one stream of data uses a third of it.
// Three streams run side by side (as in Mark Adler's crc32c.c and the Linux kernel): blocks of 3 x k_long bytes,
// then 3 x k_short, each stream's CRC joined to the previous by a zeros operator (the CRC register carried over
// `len` zero bytes, a linear map applied by four byte tables), then what remains in one stream.
constexpr std::size_t k_long = 8192, k_short = 256;

using Matrix = std::array<std::uint32_t, 32>;  // a linear map on the CRC register, column i the image of bit i

constexpr std::uint32_t times(const Matrix& m, std::uint32_t v) {
  std::uint32_t sum = 0;
  for (int i = 0; v; v >>= 1, ++i)
    if (v & 1) sum ^= m[static_cast<std::size_t>(i)];
  return sum;
}

constexpr Matrix square(const Matrix& m) {
  Matrix s{};
  for (std::size_t i = 0; i < 32; ++i) s[i] = times(m, m[i]);
  return s;
}

// The operator for `len` zero bytes, `len` a power of two.
using ShiftTables = std::array<std::array<std::uint32_t, 256>, 4>;
constexpr ShiftTables make_shift(std::size_t len) {
  Matrix op{};
  op[0] = 0x82f63b78u;  // one zero bit
  for (std::size_t i = 1; i < 32; ++i) op[i] = std::uint32_t{1} << (i - 1);
  for (int bits = 1; bits < 8; bits *= 2) op = square(op);  // one zero byte
  for (std::size_t n = 1; n < len; n *= 2) op = square(op);
  ShiftTables t{};
  for (std::uint32_t b = 0; b < 256; ++b)
    for (std::size_t k = 0; k < 4; ++k) t[k][b] = times(op, b << (8 * k));
  return t;
}

constexpr ShiftTables k_shift_long = make_shift(k_long), k_shift_short = make_shift(k_short);

constexpr std::uint32_t shift(const ShiftTables& t, std::uint32_t c) {
  return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
}

__attribute__((target("sse4.2"))) inline std::uint64_t word(std::uint64_t c, const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return _mm_crc32_u64(c, v);
}

// Three streams over 3 x `len` bytes at a time while that much remains.
__attribute__((target("sse4.2"))) std::uint32_t three_streams(std::uint32_t crc, const unsigned char*& p,
                                                              std::size_t& n, std::size_t len, const ShiftTables& t) {
  for (; n >= 3 * len; n -= 3 * len, p += 3 * len) {
    std::uint64_t c0 = crc, c1 = 0, c2 = 0;
    for (std::size_t i = 0; i < len; i += 8) {
      c0 = word(c0, p + i);
      c1 = word(c1, p + len + i);
      c2 = word(c2, p + 2 * len + i);
    }
    crc = shift(t, shift(t, static_cast<std::uint32_t>(c0)) ^ static_cast<std::uint32_t>(c1)) ^
          static_cast<std::uint32_t>(c2);
  }
  return crc;
}

__attribute__((target("sse4.2"))) std::uint32_t extend_sse42(std::uint32_t crc, const unsigned char* p, std::size_t n) {
  std::uint32_t c32 = ~crc;
  c32 = three_streams(c32, p, n, k_long, k_shift_long);
  c32 = three_streams(c32, p, n, k_short, k_shift_short);
  std::uint64_t c = c32;
  for (; n >= 8; n -= 8, p += 8) c = word(c, p);
  c32 = static_cast<std::uint32_t>(c);
  for (; n > 0; --n, ++p) c32 = _mm_crc32_u8(c32, *p);
  return ~c32;
}

const bool k_has_sse42 = __builtin_cpu_supports("sse4.2");
#endif

}  // namespace

std::uint32_t extend(std::uint32_t crc, const void* data, std::size_t n) {
#if defined(__x86_64__)
  if (k_has_sse42) return extend_sse42(crc, static_cast<const unsigned char*>(data), n);
#endif
  return extend_tables(crc, data, n);
}

std::uint32_t extend_tables(std::uint32_t crc, const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t c = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    std::uint32_t lo, hi;
    std::memcpy(&lo, p, 4);  // little-endian host (checked where the format is read)
    std::memcpy(&hi, p + 4, 4);
    lo ^= c;
    c = k_tables[7][lo & 0xff] ^ k_tables[6][(lo >> 8) & 0xff] ^ k_tables[5][(lo >> 16) & 0xff] ^
        k_tables[4][lo >> 24] ^ k_tables[3][hi & 0xff] ^ k_tables[2][(hi >> 8) & 0xff] ^
        k_tables[1][(hi >> 16) & 0xff] ^ k_tables[0][hi >> 24];
  }
  for (; n > 0; --n, ++p) c = (c >> 8) ^ k_tables[0][(c ^ *p) & 0xff];
  return ~c;
}

}  // namespace wavg::crc32c
