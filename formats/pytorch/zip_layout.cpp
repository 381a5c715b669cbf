// Reading the positions of a torch.save archive's entries, and writing such archives (layout in zip_layout.hpp).

#include "pytorch/zip_layout.hpp"
#include "pytorch/pickle.hpp"

#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "common/byte_cursor.hpp"
#include "common/shared_bytes.hpp"
#include "wavg/error.hpp"
#include "wavg/file_io.hpp"

namespace wavg::pytorch {

namespace {

constexpr std::uint32_t k_local = 0x04034b50, k_central = 0x02014b50, k_end = 0x06054b50;
constexpr std::uint32_t k_end64 = 0x06064b50, k_locator64 = 0x07064b50;
constexpr std::uint32_t k_max32 = 0xffffffffu;

[[noreturn]] void zip_overrun(const ByteCursor& c, std::uint64_t, const std::string& what) {
  fail(c.file(), "corrupt zip archive: " + what + " runs past the end of the file");
}

// The shared cursor (common/byte_cursor.hpp) over [begin, end) of the mapping, its overrun worded for a zip.
class Cursor : public ByteCursor {
 public:
  Cursor(const std::string& file, const unsigned char* data, std::uint64_t size, std::uint64_t at, const char* what)
      : ByteCursor(file, data, size, at, what, zip_overrun) {}
  std::uint64_t get(unsigned n) { return le(n); }
};

struct Directory {
  std::uint64_t entries = 0, offset = 0, size = 0;
};

Directory find_directory(const std::string& file, const unsigned char* data, std::uint64_t size) {
  // The end record is 22 bytes plus a comment of at most 65535.
  if (size < 22) refuse(file, "corrupt zip archive: no end of central directory");
  const std::uint64_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
  for (std::uint64_t at = size - 22 + 1; at-- > lowest;) {
    Cursor c(file, data, size, at, "the end record");
    if (c.get(4) != k_end) continue;
    const std::uint64_t disk = c.get(2), directory_disk = c.get(2), on_disk = c.get(2);
    Directory d;
    d.entries = c.get(2);
    if (disk != 0 || directory_disk != 0 || on_disk != d.entries)
      refuse(file, "a zip archive split over several disks");
    d.size = c.get(4);
    d.offset = c.get(4);
    if (c.get(2) != size - at - 22) continue;  // a signature inside the comment
    if (d.entries == 0xffff || d.size == k_max32 || d.offset == k_max32) {
      if (at < 20) refuse(file, "corrupt zip archive: zip64 locator missing");
      Cursor loc(file, data, size, at - 20, "the zip64 locator");
      if (loc.get(4) != k_locator64) refuse(file, "corrupt zip archive: zip64 locator missing");
      loc.skip(4);
      Cursor e(file, data, size, loc.get(8), "the zip64 end record");
      if (e.get(4) != k_end64) refuse(file, "corrupt zip archive: bad zip64 end record");
      e.skip(20);
      e.skip(8);
      d.entries = e.get(8);
      d.size = e.get(8);
      d.offset = e.get(8);
    }
    if (d.offset > size || d.size > size - d.offset)
      refuse(file, "corrupt zip archive: the central directory lies outside the file");
    if (d.entries > d.size / 46) refuse(file, "corrupt zip archive: more entries than the central directory holds");
    return d;
  }
  refuse(file, "corrupt zip archive: no end of central directory");
}

struct ZipClose {
  void operator()(zip_t* z) const { zip_discard(z); }
};

// libzip's reading of the same archive must list the same entries with the same sizes, stored.
void cross_check(const std::string& file, const std::vector<ZipEntry>& entries, const unsigned char* data,
                 std::uint64_t size, ZipSource) {
  zip_error_t err;
  zip_error_init(&err);
  std::unique_ptr<zip_t, ZipClose> z;
  if (zip_source_t* src = zip_source_buffer_create(data, size, 0, &err)) {
    z.reset(zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &err));
    if (!z) zip_source_free(src);
  }
  if (!z) {
    const std::string what = zip_error_strerror(&err);
    zip_error_fini(&err);
    refuse(file, "corrupt zip archive: " + what);
  }
  zip_error_fini(&err);
  if (zip_get_num_entries(z.get(), 0) != static_cast<zip_int64_t>(entries.size()))
    refuse(file, "corrupt zip archive: libzip counts a different number of entries");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    zip_stat_t st;
    if (zip_stat_index(z.get(), i, ZIP_FL_ENC_RAW, &st) != 0 || entries[i].name != st.name ||
        st.size != entries[i].size || st.comp_method != entries[i].method)
      refuse(file, "corrupt zip archive: entry " + entries[i].name + " reads differently through libzip");
  }
}

void check_entry_name(const std::string& file, const std::string& name) {
  if (!is_plain_entry_name(name))
    refuse(file, "the zip entry name '" + name +
                     "' is not a plain relative path (an empty part, '.', '..', a "
                     "leading slash, a backslash, a drive letter or a control character)");
}

}  // namespace

// A plain relative path (TOP/data/0): the .pt writer copies input 1's names into the output and adds TOP/wavg.json
// beside them, and an extractor would follow "..", "/" or "C:\\" out of its folder. A colon elsewhere is a plain
// character (numpy.savez writes Keras's "dense/kernel:0" as dense/kernel:0.npy); as a name's second character it
// would make a Windows drive ("C:x"), so it is refused there.
bool is_plain_entry_name(std::string_view name) {
  bool plain = !name.empty() && name.find('\\') == std::string_view::npos && !(name.size() > 1 && name[1] == ':');
  for (std::size_t start = 0; plain && start <= name.size();) {
    const std::size_t slash = std::min(name.find('/', start), name.size());
    const std::string_view part = name.substr(start, slash - start);
    plain = !part.empty() && part != "." && part != "..";
    for (const char ch : part) plain = plain && static_cast<unsigned char>(ch) >= 0x20 && ch != 0x7f;
    start = slash + 1;
  }
  return plain;
}

std::vector<ZipEntry> read_zip_directory(const std::string& file, const unsigned char* data, std::uint64_t size,
                                         ZipSource source, ZipMethods methods) {
  const Directory dir = find_directory(file, data, size);
  std::vector<ZipEntry> entries;
  entries.reserve(dir.entries);
  Cursor c(file, data, dir.offset + dir.size, dir.offset, "the central directory");
  for (std::uint64_t i = 0; i < dir.entries; ++i) {
    const std::uint64_t central = c.at();
    if (c.get(4) != k_central) refuse(file, "corrupt zip archive: bad central directory entry " + std::to_string(i));
    c.skip(4);
    const auto flags = c.get(2), method = c.get(2);
    c.skip(4);
    const auto crc = static_cast<std::uint32_t>(c.get(4));
    std::uint64_t csize = c.get(4), usize = c.get(4);
    const auto name_len = c.get(2), extra_len = c.get(2), comment_len = c.get(2);
    c.skip(8);
    std::uint64_t header = c.get(4);
    ZipEntry e;
    e.name = c.text(name_len);
    check_entry_name(file, e.name);
    // The zip64 extra field holds, in this order, those of the three values that read 0xffffffff.
    const std::uint64_t extra_end = c.at() + extra_len;
    while (c.at() + 4 <= extra_end) {
      const auto id = c.get(2), len = c.get(2);
      if (c.at() + len > extra_end) refuse(file, "corrupt zip archive: " + e.name + ": extra field overruns");
      const std::uint64_t field_end = c.at() + len;
      if (id == 1) {
        for (std::uint64_t* v : {&usize, &csize, &header})
          if (*v == k_max32) {
            if (c.at() + 8 > field_end) refuse(file, "corrupt zip archive: " + e.name + ": short zip64 field");
            *v = c.get(8);
          }
      }
      c.skip(field_end - c.at());
    }
    c.skip(extra_end - c.at());
    c.skip(comment_len);
    if (flags & 1) refuse(file, e.name + ": the entry is encrypted");
    const bool deflated = methods == ZipMethods::stored_or_deflated && method == ZIP_CM_DEFLATE;
    if (!deflated && (method != 0 || csize != usize))
      refuse(file, e.name + ": the entry is compressed (method " + std::to_string(method) + "); " +
                       (methods == ZipMethods::stored ? "torch.save stores entries uncompressed"
                                                      : "only stored and deflated entries are read"));
    Cursor local(file, data, size, header, "a local header");
    if (local.get(4) != k_local) refuse(file, "corrupt zip archive: " + e.name + ": bad local header");
    local.skip(22);
    const auto lname = local.get(2), lextra = local.get(2);
    if (local.text(lname) != e.name)
      refuse(file, "corrupt zip archive: " + e.name + ": local header names another entry");
    local.skip(lextra);
    e.data_offset = local.at();
    e.size = usize;
    e.local_header = header;
    e.central = central;
    e.descriptor = (flags & 8) != 0;
    e.method = static_cast<std::uint16_t>(method);
    e.compressed_size = csize;
    e.crc = crc;
    if (csize > size - e.data_offset)
      refuse(file, "corrupt zip archive: " + e.name + ": data runs past the end of the file");
    entries.push_back(std::move(e));
  }
  // Each entry's bytes (local header to the end of its data) apart from every other's and from the directory, as
  // Python's zipfile checks ("Overlapped entries"): data shared with another entry or with the directory would be
  // read as both, and a writer that fills one in place would damage the other.
  std::vector<StoredRegion> regions{{0, dir.offset, dir.size, entries.size()}};
  for (std::size_t i = 0; i < entries.size(); ++i)
    regions.push_back(
        {0, entries[i].local_header, entries[i].data_offset + entries[i].compressed_size - entries[i].local_header, i});
  if (const auto both = shared_bytes(std::move(regions))) {
    const auto name = [&](std::size_t i) { return i < entries.size() ? entries[i].name : "the central directory"; };
    refuse(file, "corrupt zip archive: " + name(both->first) + " and " + name(both->second) + " overlap");
  }
  cross_check(file, entries, data, size, source);
  return entries;
}

// ---- writing

namespace {

void put(std::string& s, std::uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

void ZipWriter::add(std::string name, std::uint64_t size) { m_entries.push_back({std::move(name), size}); }

void ZipWriter::add_bytes(std::string name, std::string content) {
  const std::uint64_t size = content.size();
  m_entries.push_back({.name = std::move(name), .size = size, .content = std::move(content), .given = true});
}

std::vector<std::uint64_t> ZipWriter::lay_out() {
  std::vector<std::uint64_t> offsets;
  std::uint64_t at = 0;
  for (Entry& e : m_entries) {
    e.header = at;
    const bool z64 = e.size >= k_max32;
    const std::uint64_t base = at + 30 + e.name.size() + (z64 ? 20 : 0);
    e.pad = base % 64 == 0 ? 0 : static_cast<std::uint16_t>(4 + (64 - (base + 4) % 64) % 64);
    e.data = base + e.pad;
    offsets.push_back(m_base + e.data);
    m_crcs.add(m_base + e.data, e.size);
    if (e.given) m_crcs.note(reinterpret_cast<const unsigned char*>(e.content.data()), e.size, m_base + e.data);
    at = e.data + e.size;
  }
  m_end = at;
  if (m_base == 0 && m_sizing == ZipSizing::at_start && ::ftruncate(m_fd, static_cast<off_t>(m_end)) != 0)
    fail(m_display, std::string("cannot size the output: ") + std::strerror(errno));
  return offsets;
}

std::string ZipWriter::local_header(const Entry& e, std::uint32_t crc) const {
  const bool z64 = e.size >= k_max32;
  std::string h;
  put(h, k_local, 4);
  put(h, z64 ? 45 : 20, 2);
  put(h, 0, 2);     // flags
  put(h, 0, 2);     // stored
  put(h, 0, 2);     // time 00:00
  put(h, 0x21, 2);  // date 1980-01-01: the same bytes for the same content
  put(h, crc, 4);
  put(h, z64 ? k_max32 : e.size, 4);
  put(h, z64 ? k_max32 : e.size, 4);
  put(h, e.name.size(), 2);
  put(h, (z64 ? 20 : 0) + e.pad, 2);
  h += e.name;
  if (z64) {
    put(h, 1, 2), put(h, 16, 2), put(h, e.size, 8), put(h, e.size, 8);
  }
  if (e.pad) {
    put(h, 0x4246, 2);  // "FB", torch's padding field
    put(h, e.pad - 4u, 2);
    h.append(e.pad - 4u, 'Z');
  }
  return h;
}

std::string ZipWriter::directory(const std::vector<std::uint32_t>& crc_of) const {
  std::string dir;
  for (std::size_t i = 0; i < m_entries.size(); ++i) {
    const Entry& e = m_entries[i];
    const std::uint32_t crc = crc_of[i];
    const bool z64 = e.size >= k_max32 || e.header >= k_max32;
    put(dir, k_central, 4);
    put(dir, z64 ? 45 : 20, 2);  // made by
    put(dir, z64 ? 45 : 20, 2);  // needed
    put(dir, 0, 2), put(dir, 0, 2), put(dir, 0, 2), put(dir, 0x21, 2);
    put(dir, crc, 4);
    put(dir, z64 ? k_max32 : e.size, 4);
    put(dir, z64 ? k_max32 : e.size, 4);
    put(dir, e.name.size(), 2);
    put(dir, z64 ? 28 : 0, 2);
    put(dir, 0, 2), put(dir, 0, 2), put(dir, 0, 2), put(dir, 0, 4);
    put(dir, z64 ? k_max32 : e.header, 4);
    dir += e.name;
    if (z64) put(dir, 1, 2), put(dir, 24, 2), put(dir, e.size, 8), put(dir, e.size, 8), put(dir, e.header, 8);
  }
  const std::uint64_t n = m_entries.size(), dir_size = dir.size();
  if (n >= 0xffff || m_end >= k_max32 || dir_size >= k_max32) {
    const std::uint64_t end64 = m_end + dir_size;
    put(dir, k_end64, 4), put(dir, 44, 8), put(dir, 45, 2), put(dir, 45, 2), put(dir, 0, 4), put(dir, 0, 4);
    put(dir, n, 8), put(dir, n, 8), put(dir, dir_size, 8), put(dir, m_end, 8);
    put(dir, k_locator64, 4), put(dir, 0, 4), put(dir, end64, 8), put(dir, 1, 4);
  }
  put(dir, k_end, 4), put(dir, 0, 4);
  put(dir, std::min<std::uint64_t>(n, 0xffff), 2), put(dir, std::min<std::uint64_t>(n, 0xffff), 2);
  put(dir, std::min<std::uint64_t>(dir_size, k_max32), 4), put(dir, std::min<std::uint64_t>(m_end, k_max32), 4);
  put(dir, 0, 2);
  return dir;
}

std::uint64_t ZipWriter::size() const { return m_end + directory(std::vector<std::uint32_t>(m_entries.size())).size(); }

void ZipWriter::finish() {
  const std::vector<std::uint32_t> crc_of = m_crcs.crcs(m_fd, m_display);
  // Each run of adjacent headers and given contents is written at once.
  std::string run;
  std::uint64_t run_at = 0;
  for (std::size_t i = 0; i < m_entries.size(); ++i) {
    const Entry& e = m_entries[i];
    if (run.empty()) run_at = e.header;
    run += local_header(e, crc_of[i]);
    if (e.given) {
      run += e.content;
    } else {
      wavg::pwrite_all(m_fd, run.data(), run.size(), m_base + run_at, m_display);
      run.clear();
    }
  }
  if (run.empty()) run_at = m_end;
  run += directory(crc_of);
  wavg::pwrite_all(m_fd, run.data(), run.size(), m_base + run_at, m_display);
}

std::string ZipWriter::crc_spans() const {
  std::vector<std::size_t> written;
  for (std::size_t i = 0; i < m_entries.size(); ++i)
    if (!m_entries[i].given) written.push_back(i);
  return m_crcs.spans_text(written);
}

void ZipWriter::pwrite_all(const void* data, std::uint64_t bytes, std::uint64_t at) {
  wavg::pwrite_all(m_fd, data, bytes, at, m_display);
  m_crcs.note(static_cast<const unsigned char*>(data), bytes, at);
}

}  // namespace wavg::pytorch
