#pragma once
// The CRC-32s of a file's stored zip entries, computed from the bytes as they are written, so that nothing is read
// back: each write is noted against the entries it falls in, as disjoint spans begin -> (end, CRC-32 of the span),
// adjacent spans joined with zlib's crc32_combine64, so the writes may come in any order and from any thread. An
// entry whose spans end as one span over all of it has its CRC-32; one written over twice (or in too many scattered
// pieces, as a strided view's element-wise writes) is read back from the file instead. The ranks of a distributed
// merge each note their own writes into one file, and rank 0 joins their spans (spans_text, join) before finishing.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace wavg::pytorch {

// Returns zlib's CRC-32 of `n` bytes, a large buffer in pieces on every thread (about 1 GB/s a core).
std::uint32_t crc32_of(const unsigned char* data, std::uint64_t n);

class EntryCrcs {
 public:
  // Tracks an entry whose data is [data, data + size) of the file. Entries are added in file order (by `data`) and
  // before the writes are noted; one that overlaps the entry before is read back, as is that one.
  void add(std::uint64_t data, std::uint64_t size);
  // Notes that [at, at + bytes) of the file now holds `data`.
  void note(const unsigned char* data, std::uint64_t bytes, std::uint64_t at);
  // Returns the CRC-32 of entry `i` (in the order added) from the spans noted, or nothing where they do not cover
  // it exactly once.
  std::optional<std::uint32_t> noted(std::size_t i) const;
  // Tells whether entry `i` was written over twice (or in too many pieces), so its spans say nothing.
  bool reread(std::size_t i) const { return m_entries[i].reread; }
  // Returns every entry's CRC-32: noted(), else read back from `fd` (errors name `display`).
  std::vector<std::uint32_t> crcs(int fd, const std::string& display) const;
  std::size_t size() const { return m_entries.size(); }
  // Returns the spans noted in the entries `which` (indices, ascending) and which of them are read back, as text for
  // join(): a distributed merge's rank tells rank 0 what it wrote into the one file (a few numbers an entry).
  std::string spans_text(const std::vector<std::size_t>& which) const;
  // Adds another process's spans_text() over the same entries of the same file: where both wrote, the entry is
  // read back.
  void join(const std::string& text);

 private:
  struct Span {
    std::uint64_t end;
    std::uint32_t crc;
  };
  struct Entry {
    std::uint64_t data, size;
    std::map<std::uint64_t, Span> written{};  // offsets relative to `data`
    bool reread = false;
  };
  void note_span(Entry& e, const unsigned char* data, std::uint64_t begin, std::uint64_t end);
  // Adds the span [begin, end) of `e`, whose CRC-32 is `crc`; the caller holds m_mutex.
  void add_span(Entry& e, std::uint64_t begin, std::uint64_t end, std::uint32_t crc);

  std::vector<Entry> m_entries;
  mutable std::mutex m_mutex;  // guards the entries' spans
};

}  // namespace wavg::pytorch
