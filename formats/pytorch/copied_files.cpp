// Folder outputs made of input 1's files rewritten in place (copied_files.hpp).

#include "pytorch/copied_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "wavg/error.hpp"
#include "wavg/file_io.hpp"

namespace wavg::pytorch {

namespace {

constexpr std::uint64_t k_block = 64ull << 20;

}  // namespace

std::vector<std::size_t> source_indices(const Reader& input, const std::vector<TensorInfo>& tensors,
                                        const std::string& display, const std::string& what) {
  const auto& in = input.tensors();
  std::unordered_map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < in.size(); ++i) by_name.emplace(in[i].name, i);
  std::vector<std::size_t> source;
  for (const TensorInfo& t : tensors) {
    const auto it = by_name.find(t.name);
    if (it == by_name.end() || in[it->second].shape != t.shape || in[it->second].dtype != t.dtype)
      fail(display, "tensor " + t.name + " (" + std::string(dtype_name(t.dtype)) + " " + shape_string(t.shape) +
                        ") is not in input 1 with that dtype and shape; " + what + " keeps input 1's layout");
    source.push_back(it->second);
  }
  return source;
}

CopiedFiles::~CopiedFiles() {
  for (const auto& c : m_copies)
    if (c->fd >= 0) ::close(c->fd);
}

std::size_t CopiedFiles::create(const std::string& name) {
  const int flags = m_role == CopyRole::part ? O_RDWR : O_RDWR | O_CREAT | O_EXCL;
  const int fd = ::open((m_dir + "/" + name).c_str(), flags | O_CLOEXEC, 0666);
  if (fd < 0) fail(m_display, "cannot create " + name + ": " + std::strerror(errno));
  m_copies.push_back(std::make_unique<Copy>());
  m_copies.back()->fd = fd;
  return m_copies.size() - 1;
}

// Registers the entries in data order (an entry two chunks name, once) and where each one's CRC-32 goes: the
// central directory, and the data descriptor after the data (torch's writer streams entries, so its local headers
// hold 0) or else the local header.
void CopiedFiles::track(Copy& c, const MappedFile& from, std::vector<CopiedEntry> entries) const {
  const auto data = [](const CopiedEntry& e) { return e.archive + e.entry.data_offset; };
  std::sort(entries.begin(), entries.end(), [&](const auto& a, const auto& b) { return data(a) < data(b); });
  entries.erase(std::unique(entries.begin(), entries.end(),
                            [&](const auto& a, const auto& b) { return data(a) == data(b) && a.archive == b.archive; }),
                entries.end());
  for (const CopiedEntry& e : entries) {
    c.crcs.add(data(e), e.entry.size);
    c.crc_at.push_back(e.archive + e.entry.central + 16);
    if (!e.entry.descriptor) {
      c.crc_at.push_back(e.archive + e.entry.local_header + 14);
      continue;
    }
    // The descriptor's optional signature, looked for in the original (the copy's bytes there are the same).
    const std::uint64_t was = e.original_archive + e.entry.data_offset + e.entry.size;
    const bool signature = from.contains(was, 4) && std::memcmp(from.data() + was, "PK\x07\x08", 4) == 0;
    c.crc_at.push_back(data(e) + e.entry.size + (signature ? 4 : 0));
  }
}

// Asserts that every written range lies inside one entry, whose CRC-32 is then known to cover it: a range the
// caller says it writes and does not would leave zeros, which only an entry's incomplete spans reveal.
void CopiedFiles::check_inside(const CopySpec& spec) {
  ByteRanges entries;  // [data, end) by data, then the most distant end so far
  for (const CopiedEntry& e : spec.entries)
    entries.emplace_back(e.archive + e.entry.data_offset, e.archive + e.entry.data_offset + e.entry.size);
  std::sort(entries.begin(), entries.end());
  for (std::size_t i = 1; i < entries.size(); ++i)
    entries[i].second = std::max(entries[i].second, entries[i - 1].second);
  for (const auto& [at, length] : spec.written) {
    const auto it = std::upper_bound(entries.begin(), entries.end(), std::make_pair(at, UINT64_MAX));
    WAVG_ASSERT(length == 0 || (it != entries.begin() && std::prev(it)->second >= at + length));
  }
}

std::size_t CopiedFiles::copy(const std::string& name, const MappedFile& from, const CopySpec& spec) {
  const std::size_t index = create(name);
  Copy& c = *m_copies[index];
  track(c, from, spec.entries);
  check_inside(spec);
  if (m_role == CopyRole::part) return index;  // rank 0 sizes and copies
  const ByteRanges ranges = spec.ranges.empty() ? ByteRanges{{0, from.size()}} : spec.ranges;
  // What the caller writes, as sorted disjoint ranges [begin, end).
  ByteRanges written;
  for (const auto& [at, length] : spec.written)
    if (length > 0) written.emplace_back(at, at + length);
  std::sort(written.begin(), written.end());
  ByteRanges joined;
  for (const auto& r : written)
    if (!joined.empty() && r.first <= joined.back().second)
      joined.back().second = std::max(joined.back().second, r.second);
    else
      joined.push_back(r);

  std::uint64_t size = 0;
  for (const auto& r : ranges) size += r.second;
  if (::ftruncate(c.fd, static_cast<off_t>(size)) != 0)
    fail(m_display, "cannot size " + name + ": " + std::strerror(errno));
  // Each range's bytes [to, to + length) of the copy, less the written ones, in blocks from the mapping.
  std::size_t w = 0;
  std::uint64_t to = 0;
  for (const auto& [begin, length] : ranges) {
    WAVG_ASSERT(from.contains(begin, length));  // the reader checked every storage against its file
    const std::uint64_t end = to + length;
    for (std::uint64_t pos = to; pos < end;) {
      while (w < joined.size() && joined[w].second <= pos) ++w;
      if (w < joined.size() && joined[w].first <= pos) {
        pos = std::min(end, joined[w].second);
        continue;
      }
      const std::uint64_t stop = std::min({end, w < joined.size() ? joined[w].first : end, pos + k_block});
      const std::uint64_t src = begin + (pos - to);
      write(index, from.data() + src, stop - pos, pos);
      from.release(src, src + (stop - pos));
      pos = stop;
    }
    to = end;
  }
  return index;
}

std::size_t CopiedFiles::add(const std::string& name, const std::string& bytes) {
  const std::size_t index = create(name);
  if (m_role == CopyRole::whole) write(index, bytes.data(), bytes.size(), 0);
  return index;
}

void CopiedFiles::write(std::size_t file, const void* data, std::uint64_t bytes, std::uint64_t at) {
  Copy& c = *m_copies[file];
  pwrite_all(c.fd, data, bytes, at, m_display);
  c.crcs.note(static_cast<const unsigned char*>(data), bytes, at);
}

void CopiedFiles::finish(const Provenance& provenance) {
  for (const auto& c : m_copies) {
    // Every byte of an entry was copied or is one the caller said it writes: one left out would be a hole.
    for (std::size_t i = 0; i < c->crcs.size(); ++i) WAVG_ASSERT(c->crcs.reread(i) || c->crcs.noted(i));
    const std::vector<std::uint32_t> crcs = c->crcs.crcs(c->fd, m_display);
    for (std::size_t i = 0; i < crcs.size(); ++i) {
      const std::uint32_t crc = crcs[i];
      const unsigned char le[4] = {static_cast<unsigned char>(crc), static_cast<unsigned char>(crc >> 8),
                                   static_cast<unsigned char>(crc >> 16), static_cast<unsigned char>(crc >> 24)};
      for (std::size_t k = 2 * i; k < 2 * i + 2; ++k) pwrite_all(c->fd, le, 4, c->crc_at[k], m_display);
    }
  }
  const std::string text =
      nlohmann::json(provenance.entries()).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  write(create("wavg.json"), text.data(), text.size(), 0);
  for (const auto& c : m_copies) {
    const int closing = c->fd;
    c->fd = -1;
    if (::close(closing) != 0) fail(m_display, std::string("cannot close an output file: ") + std::strerror(errno));
  }
}

std::string CopiedFiles::finish_part() {
  nlohmann::json parts = nlohmann::json::array();
  for (const auto& c : m_copies) {
    if (::fsync(c->fd) != 0) fail(m_display, std::string("cannot sync an output file: ") + std::strerror(errno));
    std::vector<std::size_t> all(c->crcs.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    parts.push_back(c->crcs.spans_text(all));
    const int closing = c->fd;
    c->fd = -1;
    if (::close(closing) != 0) fail(m_display, std::string("cannot close an output file: ") + std::strerror(errno));
  }
  return parts.dump();
}

void CopiedFiles::join_part(const std::string& part) {
  const auto parts = nlohmann::json::parse(part).get<std::vector<std::string>>();
  WAVG_ASSERT(parts.size() <= m_copies.size());  // rank 0's also holds the files it added
  for (std::size_t i = 0; i < parts.size(); ++i) m_copies[i]->crcs.join(parts[i]);
}

}  // namespace wavg::pytorch
