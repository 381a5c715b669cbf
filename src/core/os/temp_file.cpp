// Scratch files: their paths sit in a fixed table that the signal handlers read without allocating.

#include "wavg/temp_file.hpp"

#include <unistd.h>
#include <cstdlib>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "path_table.hpp"
#include "wavg/error.hpp"
#include "wavg/signals.hpp"

namespace wavg {

namespace {

PathTable<64> g_temp_files;
std::mutex g_mutex;  // creation: a slot is sure to be free before mkstemps makes the file

void remove_temp_files() noexcept { g_temp_files.unlink_all(); }

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
  if (name.size() >= PathTable<64>::k_max_path)
    fail(for_file, "the temporary directory's path is too long: " + dir.string());
  const std::lock_guard lock(g_mutex);
  const signals::DeferInterrupts deferred;
  const int fd = ::mkstemps(name.data(), static_cast<int>(suffix.size()));
  if (fd < 0) {
    const int e = errno;
    fail(for_file, "cannot create a temporary file in " + dir.string() + ": " + std::strerror(e));
  }
  ::close(fd);
  if (!g_temp_files.add(name)) {
    ::unlink(name.c_str());
    WAVG_ASSERT(!"too many temporary files");
  }
  m_path = std::move(name);
}

TempFile::~TempFile() {
  const std::lock_guard lock(g_mutex);
  const signals::DeferInterrupts deferred;
  g_temp_files.remove(m_path);
  ::unlink(m_path.c_str());
}

}  // namespace wavg
