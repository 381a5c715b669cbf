// Atomic output. The temporary file is created with mkstemp beside the target (same directory, so rename() is
// atomic and never crosses a file system). Its path is kept in a fixed table that a signal handler can read without
// allocating: remove_pending_outputs, a cleanup of signals.hpp, unlinks every pending temporary file and everything
// named after it (its companions MAIN_TMP.N, libzip's MAIN_TMP.XXXXXX) on SIGINT, SIGTERM, SIGHUP and on the
// faults wavg reports.
//
// Companions are placed with link(), which never replaces a file, and the main file last, so a reader that finds
// the new main file finds its companions, and one that finds the old main file finds the old companions untouched.
// The placing runs with interrupts held back: a signal that comes meanwhile is delivered after the commit is whole
// (or undone, when placing failed), and the handler has nothing placed to remove. SIGKILL can leave placed
// companions without their main file; their names are new, so the target still reads as the old output.

#include "wavg/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "wavg/error.hpp"
#include "wavg/signals.hpp"
#include "wavg/stdio_files.hpp"

namespace wavg {

namespace {

constexpr std::size_t k_max_pending = 8;
constexpr std::size_t k_max_path = 4096;

struct PendingSlot {
  std::atomic<bool> used{false};
  char path[k_max_path];
};
std::array<PendingSlot, k_max_pending> g_pending;

// A file's identity, and its canonical path for files that do not exist yet.
struct FileIds {
  std::set<std::pair<dev_t, ino_t>> inodes;
  std::set<std::string> paths;
};

std::string canonical_text(const std::string& path) {
  std::error_code ec;
  return std::filesystem::weakly_canonical(std::filesystem::absolute(path), ec).string();
}

FileIds ids_of(const std::vector<std::string>& files) {
  FileIds ids;
  for (const std::string& f : files) {
    struct stat st {};
    if (::stat(f.c_str(), &st) == 0) ids.inodes.insert({st.st_dev, st.st_ino});
    ids.paths.insert(canonical_text(f));
  }
  return ids;
}

bool is_one_of(const FileIds& ids, const std::string& path) {
  struct stat st {};
  return (::stat(path.c_str(), &st) == 0 && ids.inodes.count({st.st_dev, st.st_ino})) ||
         ids.paths.count(canonical_text(path));
}

// What a pending output needs beyond its slot (keyed by its temporary path).
struct PendingOutput {
  Overwrite overwrite;
  FileIds inputs;
  std::vector<std::string> companions;  // their targets; companion n + 1 is at MAIN_TMP.(n + 1)
  std::vector<bool> replacing;          // per companion: it may replace an existing file (add_replacing_companion)
  std::vector<std::string> retired;
};
std::map<std::string, PendingOutput>& pending_outputs() {
  static std::map<std::string, PendingOutput> m;
  return m;
}

PendingOutput& pending(const std::string& main_tmp) {
  const auto it = pending_outputs().find(main_tmp);
  WAVG_ASSERT(it != pending_outputs().end());
  return it->second;
}

std::string companion_path(const std::string& main_tmp, std::size_t n) { return main_tmp + "." + std::to_string(n); }

void register_pending(const std::string& path) {
  for (auto& slot : g_pending) {
    if (slot.used.load()) continue;
    std::snprintf(slot.path, sizeof slot.path, "%s", path.c_str());
    slot.used.store(true);
    return;
  }
  WAVG_ASSERT(!"too many pending output files");
}

void unregister_pending(const std::string& path) {
  for (auto& slot : g_pending)
    if (slot.used.load() && path == slot.path) slot.used.store(false);
  pending_outputs().erase(path);
}

std::string errno_text() { return std::strerror(errno); }

const char* k_exists = "already exists (use --force to replace it)";

}  // namespace

void remove_pending_outputs() noexcept {
  for (auto& slot : g_pending) {
    if (!slot.used.load()) continue;
    ::unlink(slot.path);
    signals::remove_derived(slot.path);
  }
}

AtomicFile::AtomicFile(std::string target, Overwrite overwrite, std::vector<std::string> inputs)
    : AtomicOutput(std::move(target), overwrite) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // pipeline::Output sends "-" to standard output; any other writer would make a file named "-".
  if (m_target == k_stdio_name) fail_usage("-o -: this subcommand cannot write to standard output; give a file name");
  if (fs::is_directory(m_target, ec)) throw Error(ExitCode::usage, m_target, "is a directory");
  m_lock = OutputLock(m_target);
  if (overwrite == Overwrite::no && fs::exists(fs::symlink_status(m_target, ec)))
    throw Error(ExitCode::usage, m_target, k_exists);
  struct stat st {};
  if (::stat(m_target.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw Error(ExitCode::usage, m_target, "is not a regular file (--force replaces only regular files)");
  FileIds input_ids = ids_of(inputs);
  if (is_one_of(input_ids, m_target))
    throw Error(ExitCode::usage, m_target, "the output is also an input; choose another output path");
  fs::path dir = fs::path(m_target).parent_path();
  if (dir.empty()) dir = ".";
  std::string name = fs::path(m_target).filename().string();
  if (m_target.size() + 16 >= k_max_path) fail(m_target, "output path is too long");
  std::string pattern = (dir / ("." + name + ".wavg-XXXXXX")).string();
  signals::add_cleanup(remove_pending_outputs);
  int fd = -1;
  {
    // Created and recorded as one step, so that no interruption can leave it behind.
    const signals::DeferInterrupts deferred;
    fd = ::mkstemp(pattern.data());
    if (fd >= 0) {
      register_pending(pattern);
      pending_outputs()[pattern] = PendingOutput{overwrite, std::move(input_ids), {}, {}, {}};
    }
  }
  if (fd < 0) fail(m_target, "cannot create a temporary file in " + dir.string() + ": " + errno_text());
  // mkstemp creates the file 0600; give it the permissions an ordinary new file would get.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  m_tmp = pattern;
}

AtomicFile::~AtomicFile() {
  if (m_committed || m_tmp.empty()) return;
  const signals::DeferInterrupts deferred;
  ::unlink(m_tmp.c_str());
  for (std::size_t n = 1; n <= pending(m_tmp).companions.size(); ++n) ::unlink(companion_path(m_tmp, n).c_str());
  unregister_pending(m_tmp);
}

namespace {

void flush_file(const std::string& path, const std::string& target) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
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
      if (errno == EEXIST) throw Error(ExitCode::usage, target, k_exists);
      // A file system without hard links: renameat2's RENAME_NOREPLACE keeps the promise where it exists.
      if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) != 0) {
        if (errno == EEXIST) throw Error(ExitCode::usage, target, k_exists);
        fail(target, "cannot rename the output: " + errno_text());
      }
    } else {
      ::unlink(tmp.c_str());
    }
  } else if (::rename(tmp.c_str(), target.c_str()) != 0) {
    fail(target, "cannot rename the output: " + errno_text());
  }
}

}  // namespace

void AtomicFile::commit() {
  PendingOutput& out = pending(m_tmp);
  const std::vector<std::string> targets = out.companions;
  for (std::size_t i = 0; i < targets.size(); ++i) flush_file(companion_path(m_tmp, i + 1), targets[i]);
  flush_file(m_tmp, m_target);
  {
    const signals::DeferInterrupts deferred;
    std::size_t placed = 0;
    try {
      // A companion that replaces a file of the old output (a TensorFlow data shard has a fixed name) cannot meet
      // the old main file: that goes first, so a reader finds the old output whole, none, or the new one whole.
      std::error_code ec;
      for (std::size_t i = 0; i < targets.size(); ++i)
        if (m_overwrite == Overwrite::yes && out.replacing[i] &&
            std::filesystem::exists(std::filesystem::symlink_status(targets[i], ec))) {
          ::unlink(m_target.c_str());
          break;
        }
      for (; placed < targets.size(); ++placed)
        place(companion_path(m_tmp, placed + 1), targets[placed], out.replacing[placed] ? m_overwrite : Overwrite::no);
      place(m_tmp, m_target, m_overwrite);
    } catch (const Error&) {
      for (std::size_t i = 0; i < placed; ++i) ::unlink(targets[i].c_str());
      throw;
    }
    m_committed = true;
  }
  // The new output is whole: what is left of the old one can go. An interruption here leaves only old files.
  const std::vector<std::string> retired = std::move(out.retired);
  const FileIds inputs = std::move(out.inputs);
  const FileIds mine = ids_of(targets);
  unregister_pending(m_tmp);
  for (const std::string& old : retired)
    if (!is_one_of(inputs, old) && !is_one_of(mine, old) && canonical_text(old) != canonical_text(m_target))
      ::unlink(old.c_str());
}

void check_not_input(const std::string& main_tmp, const std::string& path) {
  if (is_one_of(pending(main_tmp).inputs, path))
    fail(path, "this output file is also an input file; choose another output name");
}

std::string run_token(const std::string& main_tmp) { return main_tmp.substr(main_tmp.size() - 6); }

namespace {

std::string new_companion(const std::string& main_tmp, const std::string& target, bool replacing) {
  PendingOutput& out = pending(main_tmp);
  check_not_input(main_tmp, target);
  std::error_code ec;
  const auto st = std::filesystem::symlink_status(target, ec);
  if (std::filesystem::exists(st) && (!replacing || out.overwrite == Overwrite::no))
    throw Error(ExitCode::usage, target, k_exists);
  if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    throw Error(ExitCode::usage, target, "is not a regular file (--force replaces only regular files)");
  const std::string path = companion_path(main_tmp, out.companions.size() + 1);
  if (path.size() + 1 >= k_max_path) fail(target, "output path is too long");
  out.companions.push_back(target);
  out.replacing.push_back(replacing);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail(target, "cannot create a temporary file " + path + ": " + errno_text());
  ::close(fd);
  return path;
}

}  // namespace

std::string add_companion(const std::string& main_tmp, const std::string& target) {
  return new_companion(main_tmp, target, false);
}

std::string add_replacing_companion(const std::string& main_tmp, const std::string& target) {
  return new_companion(main_tmp, target, true);
}

Overwrite overwrite_of(const std::string& main_tmp) { return pending(main_tmp).overwrite; }

void retire_after_commit(const std::string& main_tmp, const std::string& old_file) {
  pending(main_tmp).retired.push_back(old_file);
}

void check_output_not_input(const std::string& output, const std::vector<std::string>& inputs) {
  if (is_one_of(ids_of(inputs), output))
    throw Error(ExitCode::usage, output, "the output is also an input; choose another output path");
}

}  // namespace wavg
