// Where a tensor's data may lie (hdf5_reader.hpp): in this file, written, and clear of the file's metadata and of
// every other dataset's data. A dataset's address is the file's own claim; trusting it would let the merge write
// the mean over an object header (an unreadable output) or over another tensor (a wrong one), and a few bytes of
// file can declare a dataset of terabytes that nobody ever wrote.

#include <algorithm>
#include <cstring>

#include "hdf5/hdf5_reader.hpp"
#include "wavg/error.hpp"

namespace wavg {

namespace {

// The largest dataset read although (part of) its storage was never written: below it an unwritten optimizer slot
// or buffer reads as its fill value; above it a file of a few KiB could declare a dense output of terabytes.
constexpr std::uint64_t k_max_unwritten = 64ull << 20;

}  // namespace

void Hdf5Reader::check_allocated(hid_t dataset, const std::string& name, std::uint64_t bytes) const {
  H5D_space_status_t status{};
  if (H5Dget_space_status(dataset, &status) < 0) fail(m_path, name + ": cannot tell whether its data was written");
  if (status == H5D_SPACE_STATUS_ALLOCATED || bytes <= k_max_unwritten) return;
  fail(m_path, name + ": declares " + std::to_string(bytes) + " bytes of which " +
                   (status == H5D_SPACE_STATUS_NOT_ALLOCATED ? "none were" : "only some were") +
                   " ever written (wavg reads unwritten datasets as their fill value only up to " +
                   std::to_string(k_max_unwritten >> 20) + " MiB)");
}

void Hdf5Reader::check_data_ranges() {
  // Object headers and the superblock (m_headers, noted by the coverage walk), where a dataset's data must never
  // be: writing the mean there (by pwrite() or H5Dwrite alike) would make the output unreadable. Groups' B-trees,
  // symbol nodes and local heaps are listed too when the native parser read the file; the library's API does not
  // enumerate them, and for files it walks the writer reads its output back instead (hdf5_writer.cpp).
  // Both lists sorted by where they begin, each data range is checked against its neighbour and against the
  // header that reaches furthest among those beginning before its end: n log n, not data ranges x headers.
  std::sort(m_data_ranges.begin(), m_data_ranges.end());
  std::sort(m_headers.begin(), m_headers.end(), [](const Metadata& a, const Metadata& b) { return a.span < b.span; });
  std::vector<std::size_t> furthest(m_headers.size());  // the index of the header of greatest end up to i
  for (std::size_t i = 0; i < m_headers.size(); ++i)
    furthest[i] = i > 0 && m_headers[furthest[i - 1]].span.second >= m_headers[i].span.second ? furthest[i - 1] : i;
  for (std::size_t i = 0; i < m_data_ranges.size(); ++i) {
    // Named, not a structured binding: clang before 16 cannot capture a binding in the lambda below.
    const ByteSpan& span = m_data_ranges[i].first;
    const std::size_t index = m_data_ranges[i].second;
    const auto where = [&] {
      return m_tensors[index].name + ": its data at bytes [" + std::to_string(span.first) + ", " +
             std::to_string(span.second) + ")";
    };
    if (i + 1 < m_data_ranges.size() && m_data_ranges[i + 1].first.first < span.second)
      fail(m_path,
           where() + " overlaps the data of " + m_tensors[m_data_ranges[i + 1].second].name + " (corrupt HDF5 file)");
    // The headers that begin before the data ends; of them, the one that ends furthest overlaps it if any does.
    const auto before_end = std::lower_bound(m_headers.begin(), m_headers.end(), span.second,
                                             [](const Metadata& h, std::uint64_t at) { return h.span.first < at; });
    if (before_end == m_headers.begin()) continue;
    const Metadata& m = m_headers[furthest[static_cast<std::size_t>(before_end - m_headers.begin()) - 1]];
    if (span.first < m.span.second)
      fail(m_path, where() + " overlaps " + m.what + std::string(m.name) + " (corrupt HDF5 file)");
  }
}

}  // namespace wavg
