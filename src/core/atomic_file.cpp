// Atomic output. The temporary file is created with mkstemp beside the target (same directory, so rename() is
// atomic and never crosses a file system). Its path is kept in a fixed table that a signal handler can read without
// allocating: on SIGINT, SIGTERM or SIGHUP the handler unlinks every pending temporary file, restores the default
// action and re-raises, so the shell sees the usual "killed by signal" status (130 for Ctrl-C).
//
// An output of several files (TF.js: model.json and its shards) adds companions to its AtomicFile: temporary files
// named after the main temporary file plus ".N", so the handler needs only a count per slot to remove them. On
// commit the companions are placed first and the main file last, so a reader never finds a model.json whose shards
// are missing; a failure while placing them removes those already placed.

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
#include <map>
#include <set>
#include <utility>

#include "wavg/error.hpp"

namespace wavg {

namespace {

constexpr std::size_t k_max_pending = 8;
constexpr std::size_t k_max_path = 4096;

struct PendingSlot {
  std::atomic<bool> used{false};
  std::atomic<unsigned> companions{0};
  char path[k_max_path];
};
std::array<PendingSlot, k_max_pending> g_pending;

// Per pending output (keyed by its temporary path): its overwrite policy and its companions' targets.
struct Companions {
  Overwrite overwrite;
  std::vector<std::string> targets;
};
std::map<std::string, Companions>& companions_of() {
  static std::map<std::string, Companions> m;
  return m;
}

// Inputs' files that no output may replace, by identity and by canonical path.
struct Protected {
  std::multiset<std::pair<dev_t, ino_t>> inodes;
  std::multiset<std::string> paths;
};
Protected& protected_inputs() {
  static Protected p;
  return p;
}

std::string canonical_text(const std::string& path) {
  std::error_code ec;
  return std::filesystem::weakly_canonical(std::filesystem::absolute(path), ec).string();
}

std::string companion_path(const std::string& main_tmp, std::size_t n) { return main_tmp + "." + std::to_string(n); }

// Writes `main` + "." + n into `buf` without allocating (for the signal handler).
void companion_path_into(char* buf, std::size_t size, const char* main, unsigned n) {
  std::size_t len = std::strlen(main);
  char digits[12];
  std::size_t d = 0;
  do digits[d++] = static_cast<char>('0' + n % 10); while ((n /= 10) != 0);
  if (len + 1 + d + 1 > size) { buf[0] = 0; return; }
  std::memcpy(buf, main, len);
  buf[len++] = '.';
  while (d) buf[len++] = digits[--d];
  buf[len] = 0;
}

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

PendingSlot* find_pending(const std::string& path) {
  for (auto& slot : g_pending)
    if (slot.used.load() && path == slot.path) return &slot;
  return nullptr;
}

void unregister_pending(const std::string& path) {
  if (PendingSlot* slot = find_pending(path)) {
    slot->used.store(false);
    slot->companions.store(0);
  }
  companions_of().erase(path);
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

void remove_pending_outputs() noexcept {
  for (auto& slot : g_pending) {
    if (!slot.used.load()) continue;
    ::unlink(slot.path);
    char buf[k_max_path + 16];
    for (unsigned n = 1; n <= slot.companions.load(); ++n) {
      companion_path_into(buf, sizeof buf, slot.path, n);
      if (buf[0]) ::unlink(buf);
    }
  }
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
  if (fd >= 0) {
    register_pending(pattern);
    companions_of()[pattern] = Companions{overwrite, {}};
  }
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
    const auto it = companions_of().find(m_tmp);
    if (it != companions_of().end())
      for (std::size_t n = 1; n <= it->second.targets.size(); ++n) ::unlink(companion_path(m_tmp, n).c_str());
    unregister_pending(m_tmp);
  }
}

namespace {

void flush_file(const std::string& path, const std::string& target) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string why = errno_text();
    if (fd >= 0) ::close(fd);
    fail(target, "cannot flush the output: " + why);
  }
  ::close(fd);
}

// Moves a flushed temporary file to its target.
void place(const std::string& tmp, const std::string& target, Overwrite overwrite) {
  if (overwrite == Overwrite::no) {
    // link() fails if the target appeared meanwhile, so a file created by someone else is never replaced.
    if (::link(tmp.c_str(), target.c_str()) != 0) {
      // A usage error like the early check: another run created the target while this one worked.
      if (errno == EEXIST) throw Error(ExitCode::usage, target, "already exists (use --force to replace it)");
      if (::rename(tmp.c_str(), target.c_str()) != 0) fail(target, "cannot rename the output: " + errno_text());
    } else {
      ::unlink(tmp.c_str());
    }
  } else if (::rename(tmp.c_str(), target.c_str()) != 0) {
    fail(target, "cannot rename the output: " + errno_text());
  }
}

}  // namespace

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

void AtomicFile::commit() {
  flush_file(m_tmp, m_target);
  const std::vector<std::string> targets = companions_of()[m_tmp].targets;
  std::size_t placed = 0;
  try {
    for (; placed < targets.size(); ++placed) {
      flush_file(companion_path(m_tmp, placed + 1), targets[placed]);
      place(companion_path(m_tmp, placed + 1), targets[placed], m_overwrite);
    }
    place(m_tmp, m_target, m_overwrite);
  } catch (const Error&) {
    for (std::size_t i = 0; i < placed; ++i) ::unlink(targets[i].c_str());
    throw;
  }
  unregister_pending(m_tmp);
  m_committed = true;
}

std::string add_companion(const std::string& main_tmp, const std::string& target) {
  const auto it = companions_of().find(main_tmp);
  PendingSlot* slot = find_pending(main_tmp);
  WAVG_ASSERT(it != companions_of().end() && slot);
  std::error_code ec;
  if (it->second.overwrite == Overwrite::no && std::filesystem::exists(std::filesystem::symlink_status(target, ec)))
    throw Error(ExitCode::usage, target, "already exists (use --force to replace it)");
  const std::string path = companion_path(main_tmp, it->second.targets.size() + 1);
  if (path.size() + 1 >= k_max_path) fail(target, "output path is too long");
  // Counted before it exists, so that a signal between the two steps still finds it.
  slot->companions.store(static_cast<unsigned>(it->second.targets.size() + 1));
  it->second.targets.push_back(target);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail(target, "cannot create a temporary file " + path + ": " + errno_text());
  ::close(fd);
  return path;
}

void protect_input(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) protected_inputs().inodes.insert({st.st_dev, st.st_ino});
  protected_inputs().paths.insert(canonical_text(path));
}

void unprotect_input(const std::string& path) {
  struct stat st {};
  auto& p = protected_inputs();
  if (::stat(path.c_str(), &st) == 0)
    if (auto it = p.inodes.find({st.st_dev, st.st_ino}); it != p.inodes.end()) p.inodes.erase(it);
  if (auto it = p.paths.find(canonical_text(path)); it != p.paths.end()) p.paths.erase(it);
}

void check_not_protected(const std::string& output) {
  struct stat st {};
  const auto& p = protected_inputs();
  if ((::stat(output.c_str(), &st) == 0 && p.inodes.count({st.st_dev, st.st_ino})) ||
      p.paths.count(canonical_text(output)))
    fail(output, "this output file is also an input file; choose another output name");
}

void check_output_not_input(const std::string& output, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  struct stat out_st {};
  const bool out_exists = ::stat(output.c_str(), &out_st) == 0;
  const fs::path out_abs = fs::weakly_canonical(fs::absolute(output), ec);
  for (const auto& in : inputs) {
    protect_input(in);
    struct stat in_st {};
    const bool same_inode = out_exists && ::stat(in.c_str(), &in_st) == 0 && in_st.st_dev == out_st.st_dev &&
                            in_st.st_ino == out_st.st_ino;
    std::error_code ec2;
    if (same_inode || fs::weakly_canonical(fs::absolute(in), ec2) == out_abs)
      throw Error(ExitCode::usage, output, "the output is also an input; choose another output path");
  }
}

}  // namespace wavg
