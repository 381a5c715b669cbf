#pragma once
// A folder output made of input 1's files, copied and then rewritten in place (a DCP folder's .distcp files, a
// DeepSpeed checkpoint's torch.save files), so that everything wavg does not average stays input 1's byte for byte.
// A stored zip entry whose bytes were rewritten gets its CRC-32 recomputed where the archive keeps it.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pytorch/zip_layout.hpp"
#include "wavg/format.hpp"
#include "wavg/mapped_file.hpp"
#include "wavg/provenance.hpp"

namespace wavg::pytorch {

// Returns, per output tensor of `tensors`, its index in `input`, whose files the output copies. Refuses (Error naming
// `display`) a tensor not in input 1 with that dtype and shape; `what` names the output in messages ("a DCP folder
// output"). Tensors of input 1 that the output leaves out are the caller's to handle.
std::vector<std::size_t> source_indices(const Reader& input, const std::vector<TensorInfo>& tensors,
                                        const std::string& display, const std::string& what);

class CopiedFiles {
 public:
  // Writes into the (temporary) folder `dir`; errors name `display`.
  CopiedFiles(std::string dir, std::string display) : m_dir(std::move(dir)), m_display(std::move(display)) {}
  ~CopiedFiles();
  CopiedFiles(const CopiedFiles&) = delete;
  CopiedFiles& operator=(const CopiedFiles&) = delete;

  // Copies `from` into the folder as `name` and returns the copy's index, which the calls below take.
  std::size_t copy(const std::string& name, const MappedFile& from);
  // Writes a file `name` made of the byte ranges (offset, length) of `from`, one after the other in the order
  // given, and returns its index.
  std::size_t copy_ranges(const std::string& name, const MappedFile& from,
                          const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges);
  // Writes a file `name` holding `bytes` and returns its index.
  std::size_t add(const std::string& name, const std::string& bytes);
  // Writes `bytes` at offset `at` of copy `file`.
  void write(std::size_t file, const void* data, std::uint64_t bytes, std::uint64_t at) const;
  // Recomputes the CRC-32 of `entry`'s data as it now is in copy `file`, of an archive that starts at offset
  // `archive` there (0 for a file of its own) and at `original_archive` in `original`, the mapped file it was
  // copied from, and writes it into the central directory and into the data descriptor after the data (torch's
  // writer streams entries, so its local headers hold 0) or else into the local header.
  void patch_crc(std::size_t file, std::uint64_t archive, const MappedFile& original, std::uint64_t original_archive,
                 const ZipEntry& entry) const;
  // Writes wavg.json (the provenance's entries; a file the frameworks ignore) and closes every copy.
  void finish(const Provenance& provenance);

 private:
  int create(const std::string& name) const;

  std::string m_dir, m_display;
  std::vector<int> m_fds;
};

}  // namespace wavg::pytorch
