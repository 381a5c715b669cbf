// The .npz reader (layout in npz.hpp): the zip directory is read from the mapping and cross-checked by libzip
// (pytorch/zip_layout), each member's .npy header parsed, its data length checked against the member's size, and
// its CRC-32 checked (a stored member's at open, a deflated one's by libzip as it is inflated).

#include <zip.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <set>

#include "npz/npz.hpp"
#include "pytorch/zip_layout.hpp"
#include "wavg/error.hpp"

namespace wavg {

static_assert(std::endian::native == std::endian::little, ".npy data are read as little-endian");

struct NpzReader::Member {
  std::string entry;       // the member's name in the archive
  zip_uint64_t index = 0;  // in the archive
  bool deflated = false;
  std::uint64_t at = 0;          // stored: the data's file offset; deflated: the data's offset in the member
  zip_file_t* stream = nullptr;  // deflated: open while it is being read
  std::uint64_t position = 0;    // deflated: elements of the data inflated so far
};

namespace {

constexpr std::string_view k_suffix = ".npy";

zip_t* as_zip(void* z) { return static_cast<zip_t*>(z); }

// Inflates exactly `bytes` into `dst` (nullptr: discard them), failing on a short or corrupt member.
void inflate(const std::string& file, const std::string& entry, zip_file_t* f, void* dst, std::uint64_t bytes) {
  std::vector<unsigned char> scratch(dst ? 0 : std::min<std::uint64_t>(bytes, 1 << 20));
  for (std::uint64_t done = 0; done < bytes;) {
    const std::uint64_t want = dst ? bytes - done : std::min<std::uint64_t>(bytes - done, scratch.size());
    unsigned char* to = dst ? static_cast<unsigned char*>(dst) + done : scratch.data();
    const zip_int64_t n = zip_fread(f, to, want);
    if (n < 0) fail(file, entry + ": " + zip_file_strerror(f));
    if (n == 0) fail(file, entry + ": the compressed data end early");
    done += static_cast<std::uint64_t>(n);
  }
}

}  // namespace

bool looks_like_npz(const SniffInput& input) {
  const std::string_view h = input.text();
  if (h.size() < 30 || h.substr(0, 4) != "PK\x03\x04") return false;
  const std::size_t n = static_cast<unsigned char>(h[26]) | (static_cast<unsigned char>(h[27]) << 8);
  return n > k_suffix.size() && n <= h.size() - 30 && h.substr(30, n).ends_with(k_suffix);
}

NpzReader::NpzReader(std::string path) : ListedReader(path, FormatId::npz), m_file(std::move(path)) {
  try {
    list_members();
  } catch (...) {  // a constructor that throws runs no destructor: libzip's archive is closed here
    if (m_zip) zip_discard(as_zip(m_zip));
    m_zip = nullptr;
    throw;
  }
}

void NpzReader::list_members() {
  const auto entries = pytorch::read_zip_directory(m_path, m_file.data(), m_file.size(), pytorch::ZipSource::file,
                                                   pytorch::ZipMethods::stored_or_deflated);
  std::set<std::string> seen;
  std::size_t deflated = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const pytorch::ZipEntry& e = entries[i];
    const std::size_t n = e.name.size();
    if (n <= k_suffix.size() || e.name.compare(n - k_suffix.size(), k_suffix.size(), k_suffix) != 0)
      fail(m_path, "member " + e.name + " is not a .npy array");
    Member m{e.name, i, e.method != 0};
    TensorInfo info;
    std::uint64_t header = 0;
    if (!m.deflated) {
      const unsigned char* bytes = m_file.data() + e.data_offset;
      header = npy_header_length(m_path, e.name, bytes, e.size);
      info = parse_npy_header(m_path, e.name, bytes, header).info;
      m.at = e.data_offset + header;
      // zipfile (so numpy.load) checks a stored member's CRC-32 as it reads it; here it is checked once, at open
      // as TensorFlow's crc32c are, since view() lends the bytes straight from the mapping: one more pass over the
      // stored data (zlib's CRC-32, about 1 GB/s a core, on every thread), its pages then given back.
      if (pytorch::crc32_of(bytes, e.size) != e.crc)
        fail(m_path, e.name + ": bad CRC-32 (the member was changed after it was written)");
      m_file.release(e.data_offset, e.data_offset + e.size);
    } else {
      if (!m_zip) {
        int code = 0;
        m_zip = zip_open(m_path.c_str(), ZIP_RDONLY, &code);
        if (!m_zip) fail(m_path, "libzip cannot open the archive (error " + std::to_string(code) + ")");
      }
      m.stream = zip_fopen_index(as_zip(m_zip), i, 0);
      if (!m.stream) fail(m_path, e.name + ": " + zip_strerror(as_zip(m_zip)));
      try {
        std::vector<unsigned char> bytes(static_cast<std::size_t>(std::min<std::uint64_t>(e.size, 12)));
        inflate(m_path, e.name, m.stream, bytes.data(), bytes.size());
        header = npy_header_length(m_path, e.name, bytes.data(), e.size);
        const std::size_t have = bytes.size();
        bytes.resize(std::max<std::size_t>(have, static_cast<std::size_t>(header)));
        if (header > have) inflate(m_path, e.name, m.stream, bytes.data() + have, header - have);
        info = parse_npy_header(m_path, e.name, bytes.data(), header).info;
      } catch (...) {  // a corrupt header: the stream is not a member's yet, so no destructor would close it
        zip_fclose(m.stream);
        throw;
      }
      m.at = header;
      // Reopened when the engine reads it: an open stream holds inflate's state and window.
      zip_fclose(m.stream);
      m.stream = nullptr;
      ++deflated;
    }
    info.name = e.name.substr(0, n - k_suffix.size());
    if (e.size - header != info.bytes())
      fail(m_path, e.name + ": holds " + std::to_string(e.size - header) + " bytes of data; " +
                       element_type_name(info) + " " + shape_string(stored_shape(info)) + " needs " +
                       std::to_string(info.bytes()));
    if (!seen.insert(info.name).second) fail(m_path, "member " + e.name + " appears twice");
    m_tensors.push_back(std::move(info));
    m_members.push_back(std::move(m));
  }
  m_layout = ".npz, " + std::string(deflated == 0                ? "stored (savez)"
                                    : deflated == entries.size() ? "deflated (savez_compressed)"
                                                                 : "stored and deflated");
}

NpzReader::~NpzReader() {
  for (Member& m : m_members)
    if (m.stream) zip_fclose(m.stream);
  if (m_zip) zip_discard(as_zip(m_zip));
}

void NpzReader::seek_deflated(Member& m, std::uint64_t offset) {
  const std::size_t elem = dtype_size(m_tensors[static_cast<std::size_t>(&m - m_members.data())].dtype);
  if (m.stream && m.position > offset) {
    zip_fclose(m.stream);
    m.stream = nullptr;
  }
  if (!m.stream) {
    m.stream = zip_fopen_index(as_zip(m_zip), m.index, 0);
    if (!m.stream) fail(m_path, m.entry + ": " + zip_strerror(as_zip(m_zip)));
    inflate(m_path, m.entry, m.stream, nullptr, m.at);
    m.position = 0;
  }
  inflate(m_path, m.entry, m.stream, nullptr, (offset - m.position) * elem);
  m.position = offset;
}

void NpzReader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  const TensorInfo& t = m_tensors[index];
  WAVG_ASSERT(offset + count <= t.count());
  Member& m = m_members[index];
  const std::size_t elem = dtype_size(t.dtype);
  if (!m.deflated) return void(std::memcpy(dst, m_file.data() + m.at + offset * elem, count * elem));
  seek_deflated(m, offset);
  inflate(m_path, m.entry, m.stream, dst, count * elem);
  m.position += count;
  if (m.position < t.count()) return;
  // At the end of the data libzip checks the member's CRC-32: ask for one byte more to have it checked.
  unsigned char extra;
  const zip_int64_t n = zip_fread(m.stream, &extra, 1);
  if (n != 0)
    fail(m_path, m.entry + ": " + (n < 0 ? std::string(zip_file_strerror(m.stream)) : "data after the array"));
  zip_fclose(m.stream);
  m.stream = nullptr;
}

const void* NpzReader::view(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const Member& m = m_members[index];
  WAVG_ASSERT(offset + count <= m_tensors[index].count());
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  const std::uint64_t at = m.at + offset * elem;
  return m.deflated ? nullptr : m_file.data() + at;
}

void NpzReader::release(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const Member& m = m_members[index];
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  if (!m.deflated) m_file.release(m.at + offset * elem, m.at + (offset + count) * elem);
}

void NpzReader::prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const Member& m = m_members[index];
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  if (!m.deflated) m_file.prefetch(m.at + offset * elem, m.at + (offset + count) * elem);
}

}  // namespace wavg
