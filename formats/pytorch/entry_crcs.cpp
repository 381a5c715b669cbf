// The CRC-32s of a file's stored zip entries from the bytes written (entry_crcs.hpp).

#include "pytorch/entry_crcs.hpp"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "wavg/error.hpp"

namespace wavg::pytorch {

namespace {

// Past this many disjoint spans (scattered element-wise writes of a strided view) an entry is read back instead.
constexpr std::size_t k_max_spans = 4096;

}  // namespace

// In 4 MiB pieces on every thread, joined with crc32_combine (zlib's CRC runs at about 1 GB/s a core, the slowest
// step of writing a large output).
std::uint32_t crc32_of(const unsigned char* data, std::uint64_t n) {
  constexpr std::uint64_t k_piece = std::uint64_t{4} << 20;
  if (n < 2 * k_piece) return static_cast<std::uint32_t>(crc32_z(0, data, static_cast<z_size_t>(n)));
  const std::uint64_t pieces = (n + k_piece - 1) / k_piece;
  std::vector<uLong> crc(pieces);
#pragma omp parallel for schedule(static)
  for (std::uint64_t i = 0; i < pieces; ++i)
    crc[i] = crc32_z(0, data + i * k_piece, static_cast<z_size_t>(std::min(k_piece, n - i * k_piece)));
  uLong all = crc[0];
  for (std::uint64_t i = 1; i < pieces; ++i)
    all = crc32_combine64(all, crc[i], static_cast<z_off64_t>(std::min(k_piece, n - i * k_piece)));
  return static_cast<std::uint32_t>(all);
}

void EntryCrcs::add(std::uint64_t data, std::uint64_t size) {
  WAVG_ASSERT(m_entries.empty() || m_entries.back().data <= data);
  m_entries.push_back({data, size});
  if (m_entries.size() < 2) return;
  Entry& prev = m_entries[m_entries.size() - 2];
  if (data < prev.data + prev.size && size > 0) prev.reread = m_entries.back().reread = true;
}

void EntryCrcs::note(const unsigned char* data, std::uint64_t bytes, std::uint64_t at) {
  if (bytes == 0 || m_entries.empty()) return;
  const std::uint64_t end = at + bytes;
  // The last entry starting at or before `at` (the only one of those that can hold `at` unless it overlaps another,
  // when both are read back anyway), then every entry starting before `end`.
  auto it = std::upper_bound(m_entries.begin(), m_entries.end(), at,
                             [](std::uint64_t a, const Entry& e) { return a < e.data; });
  if (it != m_entries.begin()) --it;
  for (; it != m_entries.end() && it->data < end; ++it) {
    const std::uint64_t begin = std::max(at, it->data), stop = std::min(end, it->data + it->size);
    if (begin < stop) note_span(*it, data + (begin - at), begin - it->data, stop - it->data);
  }
}

void EntryCrcs::note_span(Entry& e, const unsigned char* data, std::uint64_t begin, std::uint64_t end) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (e.reread) return;
  }
  const std::uint32_t crc = crc32_of(data, end - begin);
  std::lock_guard<std::mutex> lock(m_mutex);
  add_span(e, begin, end, crc);
}

void EntryCrcs::add_span(Entry& e, std::uint64_t begin, std::uint64_t end, std::uint32_t crc) {
  if (e.reread) return;
  auto& spans = e.written;
  auto next = spans.upper_bound(begin);
  auto prev = next == spans.begin() ? spans.end() : std::prev(next);
  if ((next != spans.end() && next->first < end) || (prev != spans.end() && prev->second.end > begin) ||
      spans.size() >= k_max_spans) {
    e.reread = true;
    spans.clear();
    return;
  }
  auto cur = prev;
  if (prev != spans.end() && prev->second.end == begin) {
    prev->second = {
        end, static_cast<std::uint32_t>(crc32_combine64(prev->second.crc, crc, static_cast<z_off64_t>(end - begin)))};
  } else {
    cur = spans.emplace(begin, Span{end, crc}).first;
  }
  if (next != spans.end() && next->first == end) {
    const auto len = static_cast<z_off64_t>(next->second.end - next->first);
    const uLong joined = crc32_combine64(cur->second.crc, next->second.crc, len);
    cur->second = {next->second.end, static_cast<std::uint32_t>(joined)};
    spans.erase(next);
  }
}

// [[entry, begin, end, crc], ...] for the spans, [entry] for an entry read back.
std::string EntryCrcs::spans_text(const std::vector<std::size_t>& which) const {
  std::lock_guard<std::mutex> lock(m_mutex);
  nlohmann::json out = nlohmann::json::array();
  for (const std::size_t i : which) {
    const Entry& e = m_entries[i];
    if (e.reread) out.push_back({i});
    for (const auto& [begin, span] : e.written) out.push_back({i, begin, span.end, span.crc});
  }
  return out.dump();
}

void EntryCrcs::join(const std::string& text) {
  const nlohmann::json spans = nlohmann::json::parse(text);
  std::lock_guard<std::mutex> lock(m_mutex);
  for (const nlohmann::json& s : spans) {
    const auto i = s.at(0).get<std::size_t>();
    WAVG_ASSERT(i < m_entries.size());
    Entry& e = m_entries[i];
    if (s.size() == 1) {
      e.reread = true;
      e.written.clear();
    } else {
      add_span(e, s.at(1).get<std::uint64_t>(), s.at(2).get<std::uint64_t>(), s.at(3).get<std::uint32_t>());
    }
  }
}

std::optional<std::uint32_t> EntryCrcs::noted(std::size_t i) const {
  std::lock_guard<std::mutex> lock(m_mutex);
  const Entry& e = m_entries[i];
  if (e.size == 0) return static_cast<std::uint32_t>(crc32_z(0, nullptr, 0));
  const auto& w = e.written;
  if (e.reread || w.size() != 1 || w.begin()->first != 0 || w.begin()->second.end != e.size) return std::nullopt;
  return w.begin()->second.crc;
}

// Entries not covered by their spans are read back from the file in 16 MiB chunks on every thread, joined per
// entry with crc32_combine.
std::vector<std::uint32_t> EntryCrcs::crcs(int fd, const std::string& display) const {
  constexpr std::uint64_t k_chunk = std::uint64_t{16} << 20;
  struct Chunk {
    std::size_t entry;
    std::uint64_t begin, size;
    uLong crc = 0;
  };
  std::vector<std::uint32_t> out(m_entries.size(), 0);
  std::vector<Chunk> chunks;
  for (std::size_t i = 0; i < m_entries.size(); ++i) {
    const Entry& e = m_entries[i];
    if (const auto crc = noted(i)) {
      out[i] = *crc;
      continue;
    }
    for (std::uint64_t at = 0; at < e.size; at += k_chunk)
      chunks.push_back({i, e.data + at, std::min(k_chunk, e.size - at)});
  }
  std::string error;
#pragma omp parallel if (!chunks.empty())
  {
    std::vector<unsigned char> buf(chunks.empty() ? 0 : k_chunk);
#pragma omp for schedule(dynamic)
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      Chunk& ch = chunks[c];
      ch.crc = crc32_z(0, nullptr, 0);
      for (std::uint64_t done = 0; done < ch.size;) {
        const ssize_t n = ::pread(fd, buf.data(), ch.size - done, static_cast<off_t>(ch.begin + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
#pragma omp critical
          error = std::string("cannot read the output back: ") + std::strerror(n < 0 ? errno : EIO);
          break;
        }
        ch.crc = crc32_z(ch.crc, buf.data(), static_cast<std::size_t>(n));
        done += static_cast<std::uint64_t>(n);
      }
    }
  }
  if (!error.empty()) fail(display, error);
  std::vector<bool> started(m_entries.size(), false);
  for (const Chunk& ch : chunks) {
    out[ch.entry] =
        started[ch.entry]
            ? static_cast<std::uint32_t>(crc32_combine64(out[ch.entry], ch.crc, static_cast<z_off64_t>(ch.size)))
            : static_cast<std::uint32_t>(ch.crc);
    started[ch.entry] = true;
  }
  return out;
}

}  // namespace wavg::pytorch
