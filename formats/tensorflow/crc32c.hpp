#pragma once
// CRC-32C (Castagnoli, reflected polynomial 0x82f63b78), as LevelDB blocks and TensorFlow tensors are checked with,
// and LevelDB's mask that keeps a CRC stored beside the data it covers from being a CRC of itself.
//
// Hand-written because no Debian 12 package offers it as a library: libcrc32c has no -dev package there, LevelDB
// and Snappy keep theirs internal, and Boost.CRC would bring all of libboost-dev for a few lines. Slicing by 8
// (eight 256-entry tables, built at compile time) runs at about 1.6 GB/s, SSE 4.2's crc32 instruction (used when
// the processor has it) at several times that, so checking every tensor costs little next to reading it.

#include <cstddef>
#include <cstdint>

namespace wavg::crc32c {

// Continues `crc` (0 to start) over `n` bytes.
std::uint32_t extend(std::uint32_t crc, const void* data, std::size_t n);
// The same by tables alone (what extend() runs without SSE 4.2), so tests check it on any processor.
std::uint32_t extend_tables(std::uint32_t crc, const void* data, std::size_t n);

inline std::uint32_t mask(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
inline std::uint32_t unmask(std::uint32_t masked) {
  const std::uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

}  // namespace wavg::crc32c
