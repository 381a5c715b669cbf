#pragma once
// One way to walk a binary layout in memory for every codec that does it by hand (MXNet's NDArray lists, a zip's
// records, TensorFlow's tables and string tensors, Caffe's protobuf wire format): a bounds-checked little-endian
// cursor, and one base-128 varint decoder (protobuf's and LevelDB's). Every read is checked against the end before
// it is made; a read past the end is an Error naming the file, worded by the codec (its `overrun`).

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

#include "wavg/error.hpp"

namespace wavg {

static_assert(std::endian::native == std::endian::little, "the cursor reads little-endian words by memcpy");

// The longest varint of a 64-bit value: 10 bytes, the tenth holding bit 63 alone.
constexpr int k_max_varint_bytes = 10;

// Decodes a varint at `p` (not past `end`) into `v` and moves `p` past it. Returns false, `p` where it was, for a
// varint that runs past `end`, is longer than 10 bytes, or overflows 64 bits (a tenth byte over 1): every codec
// refuses those alike, as protobuf does. (Padded encodings of small values, 0x80 0x00, are valid wire format and
// accepted.)
inline bool decode_varint(const unsigned char*& p, const unsigned char* end, std::uint64_t& v) {
  std::uint64_t value = 0;
  const unsigned char* q = p;
  for (int i = 0; i < k_max_varint_bytes && q < end; ++i) {
    const unsigned char b = *q++;
    if (i == k_max_varint_bytes - 1 && b > 1) return false;
    value |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      v = value;
      p = q;
      return true;
    }
  }
  return false;
}

class ByteCursor;
// Throws the codec's Error for a read of `bytes` bytes (`what`) that would pass the end of `cursor`'s data.
using Overrun = void (*)(const ByteCursor& cursor, std::uint64_t bytes, const std::string& what);

class ByteCursor {
 public:
  // Walks [data, data + size) from `at`; errors name `file`, and a read given no `what` of its own is `what`.
  ByteCursor(const std::string& file, const unsigned char* data, std::uint64_t size, std::uint64_t at = 0,
             std::string what = {}, Overrun overrun = truncated)
      : m_file(file), m_data(data), m_size(size), m_at(at), m_what(std::move(what)), m_overrun(overrun) {}

  const std::string& file() const { return m_file; }
  std::uint64_t at() const { return m_at; }
  std::uint64_t left() const { return m_at > m_size ? 0 : m_size - m_at; }
  const unsigned char* here() const { return m_data + m_at; }
  const std::string& what() const { return m_what; }

  // Throws unless `bytes` more bytes lie ahead.
  void need(std::uint64_t bytes, const std::string& what = {}) const {
    if (m_at > m_size || bytes > m_size - m_at) m_overrun(*this, bytes, what.empty() ? m_what : what);
  }
  template <typename T>
  T take(const std::string& what = {}) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, m_data + m_at, sizeof v);
    m_at += sizeof v;
    return v;
  }
  // Returns an unsigned little-endian number of `n` bytes (at most 8).
  std::uint64_t le(unsigned n, const std::string& what = {}) {
    need(n, what);
    std::uint64_t v = 0;
    for (unsigned i = n; i-- > 0;) v = (v << 8) | m_data[m_at + i];
    m_at += n;
    return v;
  }
  std::string text(std::uint64_t bytes, const std::string& what = {}) {
    need(bytes, what);
    std::string s(reinterpret_cast<const char*>(m_data + m_at), static_cast<std::size_t>(bytes));
    m_at += bytes;
    return s;
  }
  void skip(std::uint64_t bytes, const std::string& what = {}) {
    need(bytes, what);
    m_at += bytes;
  }
  // Reads a varint (decode_varint) into `v`; false, the cursor unmoved, for a broken one.
  bool varint(std::uint64_t& v) {
    if (m_at > m_size) return false;
    const unsigned char* p = m_data + m_at;
    if (!decode_varint(p, m_data + m_size, v)) return false;
    m_at = static_cast<std::uint64_t>(p - m_data);
    return true;
  }

  // The default overrun: "truncated: WHAT at byte N needs B bytes, L left".
  [[noreturn]] static void truncated(const ByteCursor& c, std::uint64_t bytes, const std::string& what) {
    fail(c.m_file, "truncated: " + what + " at byte " + std::to_string(c.m_at) + " needs " + std::to_string(bytes) +
                       " bytes, " + std::to_string(c.left()) + " left");
  }

 private:
  const std::string& m_file;
  const unsigned char* m_data;
  std::uint64_t m_size, m_at;
  std::string m_what;
  Overrun m_overrun;
};

}  // namespace wavg
