// Output locks (output_lock.hpp). The paths of the locks held sit in a fixed table that the signal handlers read
// without allocating, so that an interrupted run leaves no lock file beside its target.

#include "wavg/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <set>
#include <utility>

#include "wavg/signals.hpp"

namespace wavg {

namespace {

struct Slot {
  std::atomic<bool> used{false};
  char path[4096];
};
std::array<Slot, 8> g_locks;
std::mutex g_mutex;  // the table's registration and g_held; the handler reads without it
std::set<std::string>& held() {
  static std::set<std::string> s;  // canonical lock paths this process holds
  return s;
}

void remove_lock_files() noexcept {
  for (const Slot& s : g_locks)
    if (s.used.load(std::memory_order_acquire)) ::unlink(s.path);
}

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
  if (path.size() >= sizeof Slot::path) return;
  {
    const std::lock_guard lock(g_mutex);
    if (held().count(path)) return;
  }
  signals::add_cleanup(remove_lock_files);
  const int fd = take(path, target);
  if (fd < 0) return;
  const std::lock_guard lock(g_mutex);
  for (Slot& s : g_locks)
    if (!s.used.load()) {
      std::snprintf(s.path, sizeof s.path, "%s", path.c_str());
      s.used.store(true, std::memory_order_release);
      held().insert(path);
      m_fd = fd;
      m_path = path;
      return;
    }
  ::close(fd);  // more outputs at once than the table holds: this one goes without a lock
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
  for (Slot& s : g_locks)
    if (s.used.load() && m_path == s.path) s.used.store(false, std::memory_order_release);
  held().erase(m_path);
  ::close(m_fd);
  m_fd = -1;
}

}  // namespace wavg
