// Reading small companion files whole (small_text.hpp).

#include "small_text.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include "wavg/error.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg {

std::string read_small_text(const std::string& path, std::uint64_t limit, const std::string& what) {
  std::string why;
  const int fd = try_open_regular_file(path, FollowLinks::no, why);
  if (fd < 0) fail(path, why);
  struct stat st {};
  ::fstat(fd, &st);
  if (static_cast<std::uint64_t>(st.st_size) > limit) {
    ::close(fd);
    fail(path, what + " of " + std::to_string(st.st_size) + " bytes is larger than the limit of " +
                   std::to_string(limit >> 20) + " MiB");
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (got != text.size()) fail(path, "cannot read the " + what);
  return text;
}

}  // namespace wavg
