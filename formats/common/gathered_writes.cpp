#include "common/gathered_writes.hpp"

#include <algorithm>

#include "wavg/file_io.hpp"

namespace wavg {

void GatheredWrites::write(const void* src, std::uint64_t bytes, std::uint64_t at) {
  if (bytes >= k_small) {
    flush();
    pwrite_all(m_fd, src, bytes, at, m_display);
    return;
  }
  if (m_data.size() + bytes > k_bytes) flush();
  m_pieces.push_back({at, static_cast<std::uint32_t>(m_data.size()), static_cast<std::uint32_t>(bytes)});
  m_data.append(static_cast<const char*>(src), bytes);
}

void GatheredWrites::flush() {
  std::vector<Piece> sorted = m_pieces;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Piece& a, const Piece& b) { return a.at < b.at; });
  bool overlap = false;
  for (std::size_t i = 1; i < sorted.size(); ++i)
    overlap = overlap || sorted[i].at < sorted[i - 1].at + sorted[i - 1].size;
  if (overlap) sorted = m_pieces;  // in the order they came: each piece alone
  for (std::size_t i = 0; i < sorted.size();) {
    m_run.assign(m_data, sorted[i].from, sorted[i].size);
    const std::uint64_t at = sorted[i].at;
    for (++i; !overlap && i < sorted.size() && sorted[i].at == at + m_run.size(); ++i)
      m_run.append(m_data, sorted[i].from, sorted[i].size);
    pwrite_all(m_fd, m_run.data(), m_run.size(), at, m_display);
  }
  m_pieces.clear();
  m_data.clear();
}

}  // namespace wavg
