#include "wavg/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "wavg/error.hpp"

namespace wavg {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

int open_regular(const std::string& path, Follow follow, std::string& why) {
  // O_NONBLOCK makes open() of a FIFO return at once; it means nothing for a regular file and is cleared after.
  const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow == Follow::no ? O_NOFOLLOW : 0);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    why = errno == ELOOP && follow == Follow::no ? "is a symbolic link" : std::strerror(errno);
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    why = std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    why = S_ISDIR(st.st_mode) ? "is a directory" : std::string("is ") + kind_of(st.st_mode) + ", not a regular file";
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

void require_regular(const std::string& path) {
  std::string why;
  const int fd = open_regular(path, Follow::yes, why);
  if (fd < 0) fail(path, why);
  ::close(fd);
}

std::string resolved_path_of(int fd) {
  char buf[PATH_MAX + 1];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(link.c_str(), buf, PATH_MAX);
  if (n <= 0) return "";
  return std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace wavg
