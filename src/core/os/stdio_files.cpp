// Standard input and output as checkpoint files (see stdio_files.hpp).

#include "wavg/stdio_files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "wavg/error.hpp"
#include "wavg/temp_file.hpp"

namespace wavg {

namespace {

std::unique_ptr<TempFile> g_stdin_copy;  // destroyed (and removed) at exit

// The bytes of standard input checked before the rest is copied: what every sniffer reads at most (HDF5's
// superblock search and Caffe's first layer look at the first MiB).
constexpr std::uint64_t k_stdin_head = (1u << 20) + 8;
// The free space the copy of standard input leaves on $TMPDIR's file system: a pipe bigger than that is refused
// rather than filling the disk for the output and everyone else.
constexpr std::uint64_t k_stdin_reserve = 64u << 20;

// Reads `fd` into `out_fd` until its end or `limit` bytes; returns the bytes copied. `from` and `to` name the
// two ends in errors; `room`, when given, is called with the bytes copied so far and those about to be written.
std::uint64_t copy_stream(int fd, int out_fd, const std::string& from, const std::string& to,
                          std::uint64_t limit = UINT64_MAX,
                          const std::function<void(std::uint64_t, std::uint64_t)>& room = nullptr) {
  std::vector<char> buf(1 << 20);
  std::uint64_t total = 0;
  while (total < limit) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), limit - total));
    const ssize_t n = ::read(fd, buf.data(), want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(from, std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) return total;
    if (room) room(total, static_cast<std::uint64_t>(n));
    for (ssize_t at = 0; at < n;) {
      const ssize_t w = ::write(out_fd, buf.data() + at, static_cast<std::size_t>(n - at));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) fail(to, std::string("cannot write: ") + std::strerror(errno));
      at += w;
    }
    total += static_cast<std::uint64_t>(n);
  }
  return total;
}

// Refuses `more` bytes of the copy of standard input at `copy` when they would leave less than k_stdin_reserve
// free on its file system (`so_far` bytes are copied already).
void check_copy_room(const std::string& copy, std::uint64_t so_far, std::uint64_t more) {
  struct statvfs vfs {};
  if (::statvfs(copy.c_str(), &vfs) != 0) return;  // the write will say what is wrong
  const std::uint64_t unit = vfs.f_frsize ? vfs.f_frsize : vfs.f_bsize;
  const std::uint64_t free = unit && vfs.f_bavail > UINT64_MAX / unit ? UINT64_MAX : vfs.f_bavail * unit;
  if (free < k_stdin_reserve || more > free - k_stdin_reserve)
    fail(k_stdio_name, "its copy in " + copy + " would leave less than " + std::to_string(k_stdin_reserve >> 20) +
                           " MiB free on that file system after " + std::to_string(so_far) +
                           " bytes; set TMPDIR to a larger one, or give the checkpoint's path");
}

}  // namespace

const std::string& stdin_copy(const std::function<void(const std::string&)>& check_head) {
  if (g_stdin_copy) return g_stdin_copy->path();
  if (::isatty(STDIN_FILENO) == 1)
    fail(k_stdio_name, "standard input is a terminal; pipe a checkpoint into it (or give a file's path)");
  auto copy = std::make_unique<TempFile>("stdin", "", k_stdio_name);
  const int fd = ::open(copy->path().c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    fail(k_stdio_name, "cannot open a temporary copy of standard input: " + std::string(std::strerror(errno)));
  std::uint64_t bytes = 0;
  try {
    const std::string copy_name = std::string(k_stdio_name).append(" (its copy in ").append(copy->path()).append(")");
    const auto room = [&](std::uint64_t so_far, std::uint64_t more) {
      check_copy_room(copy->path(), bytes + so_far, more);
    };
    bytes = copy_stream(STDIN_FILENO, fd, k_stdio_name, copy_name, k_stdin_head, room);
    if (bytes == 0) fail(k_stdio_name, "standard input is empty (no checkpoint came through the pipe)");
    // What the pipe holds is known from its first bytes: a file no codec reads is refused before the rest comes.
    check_head(copy->path());
    if (bytes == k_stdin_head) bytes += copy_stream(STDIN_FILENO, fd, k_stdio_name, copy_name, UINT64_MAX, room);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0)
    fail(k_stdio_name, "cannot write the copy of standard input: " + std::string(std::strerror(errno)));
  g_stdin_copy = std::move(copy);
  return g_stdin_copy->path();
}

std::string as_given(std::string text) {
  if (!g_stdin_copy) return text;
  // Built piece by piece: GCC 12 warns (-Wrestrict, falsely) on string::replace with a literal.
  const std::string& path = g_stdin_copy->path();
  std::string out;
  std::size_t from = 0;
  for (std::size_t at; (at = text.find(path, from)) != std::string::npos; from = at + path.size())
    out.append(text, from, at - from).append(k_stdio_name);
  return out.append(text, from, std::string::npos);
}

void check_stdin_once(const std::vector<std::string>& inputs) {
  if (std::count(inputs.begin(), inputs.end(), std::string(k_stdio_name)) > 1)
    fail_usage("'-' (standard input) is given more than once; it can be read only once");
}

void check_stdout_is_not_terminal() {
  if (::isatty(STDOUT_FILENO) == 1) fail_usage("-o -: standard output is a terminal; redirect it to a file or a pipe");
}

void copy_to_stdout(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, std::string("cannot read: ") + std::strerror(errno));
  // A reader that closes the pipe early (| head) must not kill wavg with SIGPIPE, which would leave the whole
  // output in $TMPDIR: the write fails with EPIPE instead, and the error path removes the temporary file.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old);
  struct Restore {
    int fd;
    struct sigaction old;
    ~Restore() {
      ::sigaction(SIGPIPE, &old, nullptr);
      ::close(fd);
    }
  } restore{fd, old};
  copy_stream(fd, STDOUT_FILENO, path, k_stdio_name);
}

}  // namespace wavg
