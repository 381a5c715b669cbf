// Output locks (output_lock.hpp). The paths of the locks held sit in a fixed table that the signal handlers read
// without allocating, so that an interrupted run leaves no lock file beside its target.

#include "wavg/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <set>
#include <utility>

#include "path_table.hpp"
#include "wavg/signals.hpp"

namespace wavg {

namespace {

PathTable<8> g_locks;
std::mutex g_mutex;  // held(); the handler reads g_locks without it
std::set<std::string>& held() {
  static std::set<std::string> s;  // canonical lock paths this process holds
  return s;
}

void remove_lock_files() noexcept { g_locks.unlink_all(); }

std::string lock_path_of(const std::string& target) {
  namespace fs = std::filesystem;
  const fs::path p(target);
  std::string name = ".";
  name += p.filename().string();
  name += ".wavg-lock";
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(p.parent_path().empty() ? "." : p.parent_path()), ec);
  return (dir / name).string();
}

// Opens and locks `path`, waiting; returns the descriptor, or -1 when no lock can be made there.
int take(const std::string& path, const std::string& target) {
  for (bool told = false;;) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return -1;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK) {
        ::close(fd);
        return -1;
      }
      if (!told && ::isatty(STDERR_FILENO))
        std::fprintf(stderr, "wavg: waiting for another wavg run writing %s\n", target.c_str());
      told = true;
      int rc;
      while ((rc = ::flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
      }
      if (rc != 0) {
        ::close(fd);
        return -1;
      }
    }
    struct stat locked {
    }, named{};
    if (::fstat(fd, &locked) == 0 && ::lstat(path.c_str(), &named) == 0 && locked.st_dev == named.st_dev &&
        locked.st_ino == named.st_ino)
      return fd;
    ::close(fd);  // the holder before us removed it: lock the file now named so
  }
}

}  // namespace

OutputLock::OutputLock(const std::string& target) {
  const std::string path = lock_path_of(target);
  if (path.size() >= PathTable<8>::k_max_path) return;
  {
    const std::lock_guard lock(g_mutex);
    if (held().count(path)) return;
  }
  signals::add_cleanup(remove_lock_files);
  const int fd = take(path, target);
  if (fd < 0) return;
  const std::lock_guard lock(g_mutex);
  if (!g_locks.add(path)) {
    ::close(fd);  // more outputs at once than the table holds: this one goes without a lock
    return;
  }
  held().insert(path);
  m_fd = fd;
  m_path = path;
}

OutputLock::~OutputLock() { release(); }

OutputLock::OutputLock(OutputLock&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)), m_path(std::move(other.m_path)) {}

OutputLock& OutputLock::operator=(OutputLock&& other) noexcept {
  if (this != &other) {
    release();
    m_fd = std::exchange(other.m_fd, -1);
    m_path = std::move(other.m_path);
  }
  return *this;
}

void OutputLock::release() noexcept {
  if (m_fd < 0) return;
  const std::lock_guard lock(g_mutex);
  // Removed while still locked, so that no run takes it between the removal and the unlock and then loses it.
  ::unlink(m_path.c_str());
  g_locks.remove(m_path);
  held().erase(m_path);
  ::close(m_fd);
  m_fd = -1;
}

}  // namespace wavg
