// SniffInput (format.hpp): the one mapping of an input that every sniffer looks at.

#include <unistd.h>

#include <filesystem>

#include "wavg/error.hpp"
#include "wavg/format.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg {

SniffInput::SniffInput(std::string path, std::span<const unsigned char> bytes)
    : m_path(std::move(path)), m_bytes(bytes) {}

SniffInput::SniffInput(const std::string& path) : m_path(path) {
  std::error_code ec;
  m_folder = std::filesystem::is_directory(path, ec);
  if (m_folder) return;
  std::string why;
  const int fd = try_open_regular_file(path, FollowLinks::yes, why);
  if (fd < 0) return;  // no file, a FIFO, a prefix: nothing to look at, and no sniffer claims it by its bytes
  try {
    m_own = std::make_unique<MappedFile>(path, fd);
    m_bytes = {m_own->data(), static_cast<std::size_t>(m_own->size())};
  } catch (const Error&) {  // too large to map: no bytes, as for any file a sniffer cannot look into
  }
  ::close(fd);
}

SniffInput::~SniffInput() = default;

}  // namespace wavg
