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
  // Object headers and the superblock, where a dataset's data must never be: writing the mean there (by pwrite()
  // or H5Dwrite alike) would make the output unreadable. Other metadata (heaps, B-trees) is not enumerable through
  // the API; the writer reads its output back instead (hdf5_writer.cpp).
  struct Meta {
    std::vector<std::pair<ByteSpan, std::string>> spans;
    std::uint64_t base = 0;
  } meta;
  h5::Handle fcpl = h5::check(H5Fget_create_plist(m_file.get()), H5Pclose, m_path, "cannot read the file's layout");
  hsize_t userblock = 0;
  H5Pget_userblock(fcpl.get(), &userblock);
  meta.base = userblock;
  H5F_info2_t finfo{};
  if (H5Fget_info2(m_file.get(), &finfo) >= 0)
    meta.spans.push_back({{userblock, userblock + std::max<hsize_t>(finfo.super.super_size, 8)}, "the superblock"});
  auto visit = [](hid_t, const char* name, const H5O_info_t* info, void* data) -> herr_t {
    auto& m = *static_cast<Meta*>(data);
    // A header in one chunk occupies exactly its total size; of a header in several only the first bytes are
    // known to be at its address (the continuation chunks lie elsewhere).
    const std::uint64_t size = info->hdr.nchunks == 1 ? info->hdr.space.total : 16;
    m.spans.push_back({{m.base + info->addr, m.base + info->addr + size},
                       std::string("the object header of ") + (std::strcmp(name, ".") == 0 ? "/" : name)});
    return 0;
  };
  h5::check(H5Ovisit2(m_file.get(), H5_INDEX_NAME, H5_ITER_INC, visit, &meta, H5O_INFO_BASIC | H5O_INFO_HDR), m_path,
            "cannot walk the HDF5 tree");
  H5Eclear2(H5E_DEFAULT);
  std::sort(m_data_ranges.begin(), m_data_ranges.end());
  for (std::size_t i = 0; i < m_data_ranges.size(); ++i) {
    const auto& [span, index] = m_data_ranges[i];
    const auto where = "its data at bytes [" + std::to_string(span.first) + ", " + std::to_string(span.second) + ")";
    if (i + 1 < m_data_ranges.size() && m_data_ranges[i + 1].first.first < span.second)
      fail(m_path, m_tensors[index].name + ": " + where + " overlaps the data of " +
                       m_tensors[m_data_ranges[i + 1].second].name + " (corrupt HDF5 file)");
    for (const auto& [m, what] : meta.spans)
      if (m.first < span.second && span.first < m.second)
        fail(m_path, m_tensors[index].name + ": " + where + " overlaps " + what + " (corrupt HDF5 file)");
  }
}

}  // namespace wavg
