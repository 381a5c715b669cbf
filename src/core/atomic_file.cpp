// Atomic output. The temporary file is created with mkstemp beside the target (same directory, so rename() is
// atomic and never crosses a file system). Its path is kept in a fixed table that a signal handler can read without
// allocating: on SIGINT, SIGTERM or SIGHUP the handler unlinks every pending temporary file, restores the default
// action and re-raises, so the shell sees the usual "killed by signal" status (130 for Ctrl-C).

#include "wavg/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "wavg/error.hpp"

namespace wavg {

namespace {

constexpr std::size_t k_max_pending = 8;
constexpr std::size_t k_max_path = 4096;

struct PendingSlot {
  std::atomic<bool> used{false};
  char path[k_max_path];
};
std::array<PendingSlot, k_max_pending> g_pending;

extern "C" void remove_pending_and_reraise(int sig) {
  remove_pending_outputs();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_handlers_once() {
  static const bool installed = [] {
    struct sigaction sa {};
    sa.sa_handler = remove_pending_and_reraise;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
    return true;
  }();
  (void)installed;
}

PendingSlot* register_pending(const std::string& path) {
  for (auto& slot : g_pending) {
    if (slot.used.load()) continue;
    std::snprintf(slot.path, sizeof slot.path, "%s", path.c_str());
    slot.used.store(true);
    return &slot;
  }
  WAVG_ASSERT(!"too many pending output files");
  return nullptr;
}

void unregister_pending(const std::string& path) {
  for (auto& slot : g_pending)
    if (slot.used.load() && path == slot.path) slot.used.store(false);
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

void remove_pending_outputs() noexcept {
  for (auto& slot : g_pending)
    if (slot.used.load()) ::unlink(slot.path);
}

AtomicFile::AtomicFile(std::string target, Overwrite overwrite)
    : m_target(std::move(target)), m_overwrite(overwrite) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(m_target, ec)) throw Error(ExitCode::usage, m_target, "is a directory");
  if (overwrite == Overwrite::no && fs::exists(fs::symlink_status(m_target, ec)))
    throw Error(ExitCode::usage, m_target, "already exists (use --force to replace it)");
  fs::path dir = fs::path(m_target).parent_path();
  if (dir.empty()) dir = ".";
  std::string name = fs::path(m_target).filename().string();
  if (m_target.size() + 16 >= k_max_path) fail(m_target, "output path is too long");
  std::string pattern = (dir / ("." + name + ".wavg-XXXXXX")).string();
  install_handlers_once();
  // Block the signals while the path is created and registered, so no interruption can leave it behind.
  sigset_t block, old;
  sigemptyset(&block);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
  sigprocmask(SIG_BLOCK, &block, &old);
  int fd = ::mkstemp(pattern.data());
  const int saved = errno;
  if (fd >= 0) register_pending(pattern);
  sigprocmask(SIG_SETMASK, &old, nullptr);
  if (fd < 0) {
    errno = saved;
    fail(m_target, "cannot create a temporary file in " + dir.string() + ": " + errno_text());
  }
  // mkstemp creates the file 0600; give it the permissions an ordinary new file would get.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  m_tmp = pattern;
}

AtomicFile::~AtomicFile() {
  if (!m_committed && !m_tmp.empty()) {
    ::unlink(m_tmp.c_str());
    unregister_pending(m_tmp);
  }
}

void AtomicFile::commit() {
  int fd = ::open(m_tmp.c_str(), O_RDONLY);
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string why = errno_text();
    if (fd >= 0) ::close(fd);
    fail(m_target, "cannot flush the output: " + why);
  }
  ::close(fd);
  if (m_overwrite == Overwrite::no) {
    // link() fails if the target appeared meanwhile, so a file created by someone else is never replaced.
    if (::link(m_tmp.c_str(), m_target.c_str()) != 0) {
      if (errno == EEXIST) fail(m_target, "already exists (use --force to replace it)");
      if (::rename(m_tmp.c_str(), m_target.c_str()) != 0) fail(m_target, "cannot rename the output: " + errno_text());
    } else {
      ::unlink(m_tmp.c_str());
    }
  } else if (::rename(m_tmp.c_str(), m_target.c_str()) != 0) {
    fail(m_target, "cannot rename the output: " + errno_text());
  }
  unregister_pending(m_tmp);
  m_committed = true;
}

void check_output_not_input(const std::string& output, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  struct stat out_st {};
  const bool out_exists = ::stat(output.c_str(), &out_st) == 0;
  const fs::path out_abs = fs::weakly_canonical(fs::absolute(output), ec);
  for (const auto& in : inputs) {
    struct stat in_st {};
    const bool same_inode = out_exists && ::stat(in.c_str(), &in_st) == 0 && in_st.st_dev == out_st.st_dev &&
                            in_st.st_ino == out_st.st_ino;
    std::error_code ec2;
    if (same_inode || fs::weakly_canonical(fs::absolute(in), ec2) == out_abs)
      throw Error(ExitCode::usage, output, "the output is also an input; choose another output path");
  }
}

}  // namespace wavg
