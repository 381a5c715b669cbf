// Folder outputs made of input 1's files rewritten in place (copied_files.hpp).

#include "pytorch/copied_files.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "wavg/error.hpp"
#include "wavg/file_io.hpp"

namespace wavg::pytorch {

namespace {

constexpr std::uint64_t k_block = 64ull << 20;

}  // namespace

std::vector<std::size_t> source_indices(const Reader& input, const std::vector<TensorInfo>& tensors,
                                        const std::string& display, const std::string& what) {
  const auto& in = input.tensors();
  std::unordered_map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < in.size(); ++i) by_name.emplace(in[i].name, i);
  std::vector<std::size_t> source;
  for (const TensorInfo& t : tensors) {
    const auto it = by_name.find(t.name);
    if (it == by_name.end() || in[it->second].shape != t.shape || in[it->second].dtype != t.dtype)
      fail(display, "tensor " + t.name + " (" + std::string(dtype_name(t.dtype)) + " " + shape_string(t.shape) +
                        ") is not in input 1 with that dtype and shape; " + what + " keeps input 1's layout");
    source.push_back(it->second);
  }
  return source;
}

CopiedFiles::~CopiedFiles() {
  for (const int fd : m_fds)
    if (fd >= 0) ::close(fd);
}

int CopiedFiles::create(const std::string& name) const {
  const int fd = ::open((m_dir + "/" + name).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail(m_display, "cannot create " + name + ": " + std::strerror(errno));
  return fd;
}

std::size_t CopiedFiles::copy(const std::string& name, const MappedFile& from) {
  m_fds.push_back(create(name));
  for (std::uint64_t at = 0; at < from.size(); at += k_block) {
    const std::uint64_t n = std::min(k_block, from.size() - at);
    pwrite_all(m_fds.back(), from.data() + at, n, at, m_display);
    from.release(at, at + n);
  }
  return m_fds.size() - 1;
}

std::size_t CopiedFiles::copy_ranges(const std::string& name, const MappedFile& from,
                                     const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges) {
  m_fds.push_back(create(name));
  std::uint64_t to = 0;
  for (const auto& [begin, length] : ranges) {
    WAVG_ASSERT(from.contains(begin, length));  // the reader checked every storage against its file
    for (std::uint64_t at = 0; at < length; at += k_block) {
      const std::uint64_t n = std::min(k_block, length - at);
      pwrite_all(m_fds.back(), from.data() + begin + at, n, to + at, m_display);
      from.release(begin + at, begin + at + n);
    }
    to += length;
  }
  return m_fds.size() - 1;
}

std::size_t CopiedFiles::add(const std::string& name, const std::string& bytes) {
  m_fds.push_back(create(name));
  write(m_fds.size() - 1, bytes.data(), bytes.size(), 0);
  return m_fds.size() - 1;
}

void CopiedFiles::write(std::size_t file, const void* data, std::uint64_t bytes, std::uint64_t at) const {
  pwrite_all(m_fds[file], data, bytes, at, m_display);
}

void CopiedFiles::patch_crc(std::size_t file, std::uint64_t archive, const MappedFile& original,
                            std::uint64_t original_archive, const ZipEntry& entry) const {
  const int fd = m_fds[file];
  const std::uint64_t data = archive + entry.data_offset;
  std::vector<unsigned char> buf(std::min<std::uint64_t>(entry.size, k_block));
  uLong crc = crc32(0, nullptr, 0);
  for (std::uint64_t done = 0; done < entry.size;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), entry.size - done));
    const ssize_t got = ::pread(fd, buf.data(), n, static_cast<off_t>(data + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) fail(m_display, std::string("cannot read back the output: ") + std::strerror(errno));
    crc = crc32(crc, buf.data(), static_cast<uInt>(got));
    done += static_cast<std::uint64_t>(got);
  }
  const unsigned char le[4] = {static_cast<unsigned char>(crc), static_cast<unsigned char>(crc >> 8),
                               static_cast<unsigned char>(crc >> 16), static_cast<unsigned char>(crc >> 24)};
  write(file, le, 4, archive + entry.central + 16);
  if (!entry.descriptor) {
    write(file, le, 4, archive + entry.local_header + 14);
    return;
  }
  // The descriptor's optional signature, looked for in the original (the copy's bytes there are the same).
  const std::uint64_t was = original_archive + entry.data_offset + entry.size;
  const bool signature = original.contains(was, 4) && std::memcmp(original.data() + was, "PK\x07\x08", 4) == 0;
  write(file, le, 4, data + entry.size + (signature ? 4 : 0));
}

void CopiedFiles::finish(const Provenance& provenance) {
  const std::string text =
      nlohmann::json(provenance.entries()).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  m_fds.push_back(create("wavg.json"));
  write(m_fds.size() - 1, text.data(), text.size(), 0);
  for (int& fd : m_fds) {
    const int closing = fd;
    fd = -1;
    if (::close(closing) != 0) fail(m_display, std::string("cannot close an output file: ") + std::strerror(errno));
  }
}

}  // namespace wavg::pytorch
