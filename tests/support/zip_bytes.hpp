#pragma once
// A zip archive of stored entries assembled by the test's own bytes (APPNOTE.TXT 4.3: local headers with the data,
// the central directory, the end record), for codecs whose files are zips (.keras, .npz, torch.save).

#include <zlib.h>

#include <string>
#include <utility>
#include <vector>

#include "support/bytes.hpp"

namespace wavg::test {

// Returns a zip archive holding `entries` (name, data), stored uncompressed, in this order.
inline std::string zip_stored(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out, directory;
  for (const auto& [name, data] : entries) {
    const auto crc = static_cast<std::uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
    const auto size = static_cast<std::uint32_t>(data.size());
    const auto name_len = static_cast<std::uint16_t>(name.size());
    const auto offset = static_cast<std::uint32_t>(out.size());
    // version 2.0, no flags, stored, time 00:00, date 1980-01-01
    const std::string common = le_bytes<std::uint16_t>(20) + le_bytes<std::uint16_t>(0) + le_bytes<std::uint16_t>(0) +
                               le_bytes<std::uint16_t>(0) + le_bytes<std::uint16_t>(0x21) + le_bytes(crc) +
                               le_bytes(size) + le_bytes(size) + le_bytes(name_len) + le_bytes<std::uint16_t>(0);
    out += le_bytes<std::uint32_t>(0x04034b50) + common + name + data;
    directory += le_bytes<std::uint32_t>(0x02014b50) + le_bytes<std::uint16_t>(20) + common +
                 le_bytes<std::uint16_t>(0) + le_bytes<std::uint16_t>(0) + le_bytes<std::uint16_t>(0) +
                 le_bytes<std::uint32_t>(0) + le_bytes(offset) + name;
  }
  const auto count = static_cast<std::uint16_t>(entries.size());
  const auto dir_offset = static_cast<std::uint32_t>(out.size());
  out += directory;
  out += le_bytes<std::uint32_t>(0x06054b50) + le_bytes<std::uint16_t>(0) + le_bytes<std::uint16_t>(0) +
         le_bytes(count) + le_bytes(count) + le_bytes(static_cast<std::uint32_t>(directory.size())) +
         le_bytes(dir_offset) + le_bytes<std::uint16_t>(0);
  return out;
}

}  // namespace wavg::test
