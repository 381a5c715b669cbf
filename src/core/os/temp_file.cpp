// Scratch files: their paths sit in a fixed table that the signal handlers read without allocating.

#include "wavg/temp_file.hpp"

#include <unistd.h>
#include <cstdlib>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "wavg/error.hpp"
#include "wavg/signals.hpp"

namespace wavg {

namespace {

struct Slot {
  std::atomic<bool> used{false};
  char path[4096];
};
std::array<Slot, 64> g_temp_files;
std::mutex g_mutex;  // registration only; the handler reads without it

void remove_temp_files() noexcept {
  for (const Slot& s : g_temp_files)
    if (s.used.load(std::memory_order_acquire)) ::unlink(s.path);
}

}  // namespace

TempFile::TempFile(const std::string& prefix, const std::string& suffix, const std::string& for_file) {
  signals::add_cleanup(remove_temp_files);
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) {
    const char* env = std::getenv("TMPDIR");
    fail(for_file, "cannot create a temporary file in $TMPDIR" + (env ? " (" + std::string(env) + ")" : std::string()) +
                       ": " + ec.message());
  }
  std::string name = (dir / ("wavg-" + prefix + "-XXXXXX" + suffix)).string();
  if (name.size() >= sizeof Slot::path) fail(for_file, "the temporary directory's path is too long: " + dir.string());
  const std::lock_guard lock(g_mutex);
  const signals::DeferInterrupts deferred;
  Slot* slot = nullptr;
  for (Slot& candidate : g_temp_files)
    if (!candidate.used.load()) slot = &candidate;
  WAVG_ASSERT(slot && "too many temporary files");
  const int fd = ::mkstemps(name.data(), static_cast<int>(suffix.size()));
  if (fd < 0) {
    const int e = errno;
    fail(for_file, "cannot create a temporary file in " + dir.string() + ": " + std::strerror(e));
  }
  ::close(fd);
  std::snprintf(slot->path, sizeof slot->path, "%s", name.c_str());
  slot->used.store(true, std::memory_order_release);
  m_path = std::move(name);
}

TempFile::~TempFile() {
  const std::lock_guard lock(g_mutex);
  const signals::DeferInterrupts deferred;
  for (Slot& s : g_temp_files)
    if (s.used.load() && m_path == s.path) s.used.store(false);
  ::unlink(m_path.c_str());
}

}  // namespace wavg
