#pragma once
// A folder output made of input 1's files, copied and rewritten in place (a DCP folder's .distcp files, a DeepSpeed
// checkpoint's torch.save files), so that everything wavg does not average stays input 1's byte for byte. Each
// output byte is written once: a copy is sized first and takes from input 1 only the bytes the merge does not write
// (zip headers, pickles, torch.save'd values, a storage's bytes outside its tensor); the tensors' values are then
// written by the engine. The CRC-32 of each stored zip entry the merge rewrites is computed from the bytes as they
// are written, copied or merged (entry_crcs.hpp), and written where the archive keeps it, so nothing is read back.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pytorch/entry_crcs.hpp"
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

using ByteRanges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;  // (offset, length) each

// A stored zip entry of a copy whose CRC-32 the copy keeps: `entry` (offsets relative to its archive) of the
// archive at `archive` in the copy and at `original_archive` in the file copied.
struct CopiedEntry {
  std::uint64_t archive = 0, original_archive = 0;
  ZipEntry entry;
};

// What a copy is made of.
struct CopySpec {
  ByteRanges ranges;  // of the file copied, one after the other in the copy; none: the whole file
  // Of the copy: the bytes the caller writes, every one, with write(); each inside one of `entries`' data
  ByteRanges written;
  std::vector<CopiedEntry> entries;  // whose CRC-32s finish() writes
};

// Which process writes the copies: the only one, or a distributed merge's rank other than 0 (OutputSpec::part),
// which opens the files rank 0 made and copied and writes its share of the values into them.
enum class CopyRole { whole, part };

class CopiedFiles {
 public:
  // Writes into the (temporary) folder `dir`; errors name `display`.
  CopiedFiles(std::string dir, std::string display, CopyRole role = CopyRole::whole)
      : m_dir(std::move(dir)), m_display(std::move(display)), m_role(role) {}
  ~CopiedFiles();
  CopiedFiles(const CopiedFiles&) = delete;
  CopiedFiles& operator=(const CopiedFiles&) = delete;

  // Makes a file `name` of the bytes of `from` that `spec` names, less those it says the caller writes, and returns
  // its index, which write() takes.
  std::size_t copy(const std::string& name, const MappedFile& from, const CopySpec& spec = {});
  // Writes a file `name` holding `bytes` and returns its index.
  std::size_t add(const std::string& name, const std::string& bytes);
  // Writes `bytes` at offset `at` of copy `file`.
  void write(std::size_t file, const void* data, std::uint64_t bytes, std::uint64_t at);
  // Writes the CRC-32s of the copies' entries, then wavg.json (the provenance's entries; a file the frameworks
  // ignore), and closes every copy.
  void finish(const Provenance& provenance);
  // Syncs and closes a part's copies and returns what it wrote into their entries (EntryCrcs::spans_text), for
  // rank 0's join_part() before its finish().
  std::string finish_part();
  void join_part(const std::string& part);

 private:
  struct Copy {
    int fd = -1;
    EntryCrcs crcs;                     // of its entries, in data order
    std::vector<std::uint64_t> crc_at;  // per entry, where its CRC-32 goes: two places each
  };
  std::size_t create(const std::string& name);
  void track(Copy& c, const MappedFile& from, std::vector<CopiedEntry> entries) const;
  static void check_inside(const CopySpec& spec);

  std::string m_dir, m_display;
  CopyRole m_role;
  std::vector<std::unique_ptr<Copy>> m_copies;
};

}  // namespace wavg::pytorch
