#include "wavg/file_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "wavg/error.hpp"

namespace wavg {

void close_output(int& fd, const std::string& display) {
  const int closing = fd;
  fd = -1;
  if (closing >= 0 && ::close(closing) != 0)
    fail(display, std::string("cannot close the output: ") + std::strerror(errno));
}

void pwrite_all(int fd, const void* data, std::uint64_t bytes, std::uint64_t at, const std::string& display) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd, p, bytes, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(display, std::string("write failed: ") + std::strerror(errno));
    p += n;
    at += static_cast<std::uint64_t>(n);
    bytes -= static_cast<std::uint64_t>(n);
  }
}

void write_new_file(const std::string& dir, const std::string& name, const std::string& text,
                    const std::string& display) {
  const std::string path = dir + "/" + name;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail(display, "cannot create " + name + ": " + std::strerror(errno));
  try {
    pwrite_all(fd, text.data(), text.size(), 0, display);
  } catch (...) {
    ::close(fd);
    throw;
  }
  close_output(fd, display);
}

}  // namespace wavg
