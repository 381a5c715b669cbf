// Directory outputs (atomic_directory.hpp). The pending temporary directories sit in a fixed table that the signal
// handlers read without allocating; signals::remove_tree removes one with its contents. What the writer says about
// filling an existing target (switch files, retired files) is kept per temporary directory.

#include "wavg/atomic_directory.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "wavg/error.hpp"
#include "wavg/signals.hpp"

namespace wavg {

namespace {

namespace fs = std::filesystem;

struct Slot {
  std::atomic<bool> used{false};
  char path[4096];
};
std::array<Slot, 8> g_pending_dirs;

void remove_pending_dirs() noexcept {
  for (const Slot& s : g_pending_dirs)
    if (s.used.load(std::memory_order_acquire)) signals::remove_tree(s.path);
}

// Records `path` for the handlers; the caller holds interrupts back.
void register_dir(const std::string& path) {
  for (Slot& s : g_pending_dirs)
    if (!s.used.load()) {
      std::snprintf(s.path, sizeof s.path, "%s", path.c_str());
      s.used.store(true, std::memory_order_release);
      return;
    }
  WAVG_ASSERT(!"too many pending output directories");
}

void unregister_dir(const std::string& path) {
  for (Slot& s : g_pending_dirs)
    if (s.used.load() && path == s.path) s.used.store(false);
}

// Removes `path` and everything in it, outside a signal handler.
void remove_dir(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
}

std::string canonical_text(const std::string& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  const fs::path canonical = fs::weakly_canonical(absolute, ec);
  // A name the system refuses (a component over NAME_MAX) has no canonical form; weakly_canonical then returns an
  // empty path, which would equal every other refused name: compare such a name by its text instead.
  return (ec ? absolute.lexically_normal() : canonical).string();
}

// Tells whether `file` is `dir` or lies inside it, by canonical path.
bool lies_in(const std::string& file, const std::string& dir) {
  const std::string f = canonical_text(file), d = canonical_text(dir);
  return f == d || (f.size() > d.size() && f.compare(0, d.size(), d) == 0 && f[d.size()] == '/');
}

// What the writer said about filling an existing target, per temporary directory.
struct FolderPlan {
  std::vector<std::string> switch_files;
  std::vector<std::string> retired;
};
std::map<std::string, FolderPlan>& folder_plans() {
  static std::map<std::string, FolderPlan> m;
  return m;
}

void fsync_path(const std::string& path, const std::string& target) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    fail(target, "cannot flush the output: " + why);
  }
  ::close(fd);
}

// Moves every entry of `tmp` into the existing folder `target`, the `last` ones after the others in their order, and
// returns their names. A file replaces the target's file of its name; a folder never replaces anything. A failure
// takes back the entries placed under names the target lacked (one that replaced an old file has no way back).
std::set<std::string> place_entries(const std::string& tmp, const std::string& target,
                                    const std::vector<std::string>& last) {
  std::vector<std::string> order;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(tmp, ec)) {
    const std::string name = e.path().filename().string();
    if (std::find(last.begin(), last.end(), name) == last.end()) order.push_back(name);
  }
  if (ec) fail(target, "cannot list the output folder: " + ec.message());
  std::sort(order.begin(), order.end());
  for (const std::string& name : last)
    if (fs::exists(fs::symlink_status(fs::path(tmp) / name, ec))) order.push_back(name);
  std::set<std::string> placed;
  std::vector<std::string> added;  // placed where the target had nothing
  for (const std::string& name : order) {
    const std::string from = (fs::path(tmp) / name).string(), to = (fs::path(target) / name).string();
    const bool existed = fs::exists(fs::symlink_status(to, ec));
    const bool dir = fs::is_directory(fs::symlink_status(from, ec));
    const int rc = dir ? ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE)
                       : ::rename(from.c_str(), to.c_str());
    if (rc != 0) {
      const std::string why = std::strerror(errno);
      for (const std::string& back : added) ::rename((fs::path(target) / back).c_str(), (fs::path(tmp) / back).c_str());
      fail(to, "cannot move the new file into the output folder: " + why);
    }
    placed.insert(name);
    if (!existed) added.push_back(name);
  }
  return placed;
}

}  // namespace

AtomicDirectory::AtomicDirectory(std::string target, Overwrite overwrite, const std::vector<std::string>& inputs)
    : AtomicOutput(std::move(target), overwrite) {
  while (m_target.size() > 1 && m_target.back() == '/') m_target.pop_back();
  m_lock = OutputLock(m_target);
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(m_target, ec);
  if (fs::exists(st)) {
    if (overwrite == Overwrite::no)
      throw Error(ExitCode::usage, m_target, "already exists (use --force to replace it)");
    if (!fs::is_directory(st))
      throw Error(ExitCode::usage, m_target, "is not a directory (--force replaces a folder output only by a folder)");
  }
  for (const std::string& in : inputs)
    if (lies_in(in, m_target))
      throw Error(ExitCode::usage, m_target, "holds the input " + in + "; choose another output folder");
  fs::path parent = fs::path(m_target).parent_path();
  if (parent.empty()) parent = ".";
  std::string name = ".";
  name += fs::path(m_target).filename().string();  // appended, not "." + ...: GCC 12 warns falsely (-Wrestrict)
  name += ".wavg-XXXXXX";
  std::string pattern = (parent / name).string();
  if (pattern.size() >= sizeof Slot::path) fail(m_target, "output path is too long");
  signals::add_cleanup(remove_pending_dirs);
  const signals::DeferInterrupts deferred;
  if (!::mkdtemp(pattern.data()))
    fail(m_target, "cannot create a temporary directory in " + parent.string() + ": " + std::strerror(errno));
  // mkdtemp creates it 0700; give it the permissions an ordinary new directory would get.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(pattern.c_str(), 0777 & ~mask);
  register_dir(pattern);
  folder_plans()[pattern] = {};
  m_tmp = pattern;
}

AtomicDirectory::~AtomicDirectory() {
  if (m_committed || m_tmp.empty()) return;
  const signals::DeferInterrupts deferred;
  remove_dir(m_tmp);
  unregister_dir(m_tmp);
  folder_plans().erase(m_tmp);
}

void AtomicDirectory::commit() {
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(m_tmp, ec))
    if (e.is_regular_file() || e.is_directory()) fsync_path(e.path().string(), m_target);
  if (ec) fail(m_target, "cannot list the output folder: " + ec.message());
  fsync_path(m_tmp, m_target);
  const FolderPlan plan = folder_plans()[m_tmp];
  std::set<std::string> placed;
  {
    const signals::DeferInterrupts deferred;
    const fs::file_status st = fs::symlink_status(m_target, ec);
    if (fs::exists(st) && m_overwrite == Overwrite::no)
      throw Error(ExitCode::usage, m_target, "already exists (use --force to replace it)");
    if (!fs::exists(st)) {
      // RENAME_NOREPLACE: a target that appeared meanwhile is never replaced (rename() would take an empty folder).
      if (::renameat2(AT_FDCWD, m_tmp.c_str(), AT_FDCWD, m_target.c_str(), RENAME_NOREPLACE) != 0)
        fail(m_target, std::string("cannot rename the output folder: ") + std::strerror(errno));
      unregister_dir(m_tmp);
      folder_plans().erase(m_tmp);
      m_committed = true;
      return;
    }
    if (!fs::is_directory(st))
      throw Error(ExitCode::usage, m_target, "is not a directory (--force replaces a folder output only by a folder)");
    placed = place_entries(m_tmp, m_target, plan.switch_files);
    // Still with interrupts held back: a signal that came during the placing is raised when this block ends, and
    // the emptied temporary folder (no longer registered for removal) and the old model's leftovers must be gone by
    // then. Outside the block a held-back SIGINT left .NAME.wavg-XXXXXX beside the model (seen in a CI run).
    ::rmdir(m_tmp.c_str());
    unregister_dir(m_tmp);
    folder_plans().erase(m_tmp);
    m_committed = true;
    // The new model is in place: what is left of the old one goes, so that no old shard is left for a reader to
    // find beside an index that does not name it.
    for (const std::string& name : plan.retired) {
      if (placed.count(name)) continue;
      ::unlink((fs::path(m_target) / name).c_str());
      // A folder of the old model that this emptied (an Orbax store's d/) goes too; rmdir leaves any other.
      for (fs::path up = fs::path(name).parent_path(); !up.empty(); up = up.parent_path())
        ::rmdir((fs::path(m_target) / up).c_str());
    }
  }
  fsync_path(m_target, m_target);
}

void set_switch_files(const std::string& tmp_dir, std::vector<std::string> names) {
  folder_plans().at(tmp_dir).switch_files = std::move(names);
}

void check_model_folder(const std::string& folder, const std::function<bool()>& holds_model, std::string_view kind) {
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(folder, ec)) && !fs::is_empty(folder, ec) && !holds_model())
    throw Error(ExitCode::usage, folder,
                "is a folder that holds no " + std::string(kind) + "; wavg replaces only a model folder");
}

void retire_in_folder(const std::string& tmp_dir, const std::string& name) {
  folder_plans().at(tmp_dir).retired.push_back(name);
}

}  // namespace wavg
