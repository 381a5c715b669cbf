#pragma once
// The zip container of torch.save files: where each entry's bytes lie in the file, and a writer of such archives.
//
// On disk (APPNOTE.TXT 6.3; every integer little-endian), as torch's writer (miniz) lays it out:
//
//   per entry   local header   u32 0x04034b50, u16 version, u16 flags, u16 method (0 = stored), u16 time,
//                              u16 date, u32 crc32, u32 compressed size, u32 size, u16 name length n,
//                              u16 extra length e, name (n), extra (e; torch pads with an "FB" field so the
//                              data starts on a 64-byte boundary)
//               data           the entry's bytes, stored
//   then        central directory: per entry u32 0x02014b50, ... u32 crc32, u32 compressed size, u32 size,
//                              u16 n, u16 e, u16 comment length, ..., u32 local header offset, name, extra,
//                              comment (sizes and offset 0xffffffff when the zip64 extra field 0x0001 holds them)
//               [zip64 end of central directory record u32 0x06064b50 and its locator u32 0x07064b50]
//               end of central directory u32 0x06054b50, ..., u16 entries, u32 directory size,
//                              u32 directory offset, u16 comment length, comment
//
// Parsed here rather than through libzip because libzip has no API for the file offset of an entry's data, and
// the reader serves storages straight from a memory mapping at that offset. libzip still opens the archive
// (ZIP_CHECKCONS) and its listing must agree with this parse, so two independent readers vouch for the layout.
// Every count, offset and length is checked against the file before it is used.
//
// The writer is hand-written for the same reason in reverse: the data of every entry must start on a 64-byte
// boundary (torch's own layout, and what lets a reader map it), and the storages are filled in place block by
// block as the engine produces them; libzip writes sequentially from sources and cannot align. Each entry's CRC-32
// is computed from the bytes as they are written (entry_crcs.hpp).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pytorch/entry_crcs.hpp"

namespace wavg::pytorch {

struct ZipEntry {
  std::string name;
  std::uint64_t data_offset = 0;  // in the file
  std::uint64_t size = 0;
  std::uint64_t local_header = 0;     // offsets of its local header and central directory entry (their CRC-32 lies
  std::uint64_t central = 0;          // at +14 and +16), for a writer that patches an entry in place
  bool descriptor = false;            // flag bit 3: a data descriptor (CRC-32 and sizes) follows the data
  std::uint16_t method = 0;           // 0 stored, 8 deflated
  std::uint64_t compressed_size = 0;  // the bytes at data_offset (size when stored)
  std::uint32_t crc = 0;              // the central directory's CRC-32 of the uncompressed bytes
};

// Where the archive lies: a file of its own, or bytes inside another file (a DCP .distcp file holds one torch.save
// archive per tensor chunk). libzip reads either from the mapping (not the path: reading each local header through
// the file cost two system calls per entry).
enum class ZipSource { file, embedded };

// Which compression methods an archive's entries may use (torch.save stores; numpy.savez_compressed deflates).
enum class ZipMethods { stored, stored_or_deflated };

// Tells whether `name` is a plain relative path an archive may hold: no empty part, '.', '..', leading slash,
// backslash, drive letter ("C:") or control character. read_zip_directory refuses other names.
bool is_plain_entry_name(std::string_view name);

// Lists a zip archive's entries from its mapping. Refuses (Error naming `file`) compressed entries unless `methods`
// allows deflate, encrypted entries, entries whose data lies outside the archive, and any inconsistency with
// libzip's reading of the same archive.
std::vector<ZipEntry> read_zip_directory(const std::string& file, const unsigned char* data, std::uint64_t size,
                                         ZipSource source = ZipSource::file, ZipMethods methods = ZipMethods::stored);

// Writes an archive of stored entries into a file: add() every entry, then lay_out() sizes the file and returns
// the data offset of each entry; the caller writes the bytes there with pwrite_all() (any order, any thread);
// finish() writes the headers, with the CRC-32s of what was written, and the central directory. The archive starts
// at file offset `base` (a DCP rank file holds one archive per tensor, each one's offsets relative to its start).
// Who sizes the file an archive lies in: lay_out() when the archive starts it (base 0), or always its caller (a
// distributed merge's rank other than 0 never resizes the file rank 0 is filling).
enum class ZipSizing { at_start, by_caller };

class ZipWriter {
 public:
  ZipWriter(int fd, std::string display, std::uint64_t base = 0, ZipSizing sizing = ZipSizing::at_start)
      : m_fd(fd), m_display(std::move(display)), m_base(base), m_sizing(sizing) {}
  void add(std::string name, std::uint64_t size);
  // Adds an entry of the bytes `content`, which finish() writes with the headers (no pwrite_all() for it: an
  // archive of small entries around one tensor costs two writes).
  void add_bytes(std::string name, std::string content);
  // Returns each entry's data offset in the file; sizes the file when the archive starts it (base 0), else the
  // caller sizes it.
  std::vector<std::uint64_t> lay_out();
  // The archive's bytes, central directory included (after lay_out()).
  std::uint64_t size() const;
  void finish();
  // Writes `bytes` at file offset `at`.
  void pwrite_all(const void* data, std::uint64_t bytes, std::uint64_t at);
  // Returns what this process wrote into the entries (not the add_bytes() ones, which every rank lays out alike),
  // for the join_crcs() of the process that calls finish(): the ranks of a distributed merge write one archive.
  std::string crc_spans() const;
  // Takes another process's crc_spans() of the same archive.
  void join_crcs(const std::string& spans) { m_crcs.join(spans); }

 private:
  struct Entry {
    std::string name;
    std::uint64_t size;
    std::uint64_t header = 0;  // offset of the local header
    std::uint64_t data = 0;
    std::uint16_t pad = 0;  // bytes of the alignment extra field
    std::string content{};  // add_bytes()'s
    bool given = false;
  };
  std::string local_header(const Entry& e, std::uint32_t crc) const;
  std::string directory(const std::vector<std::uint32_t>& crc_of) const;

  int m_fd;
  std::string m_display;
  std::uint64_t m_base = 0;
  ZipSizing m_sizing;
  std::vector<Entry> m_entries;
  std::uint64_t m_end = 0;  // where the central directory starts, relative to m_base
  EntryCrcs m_crcs;         // the entries' CRC-32s, from what pwrite_all() wrote
};

}  // namespace wavg::pytorch
