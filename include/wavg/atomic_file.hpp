#pragma once
// Output goes to a temporary file beside the target and is renamed over it only on commit(). If the process fails,
// throws, or is interrupted by SIGINT/SIGTERM/SIGHUP, the temporary file is removed and the target is untouched.

#include <cstdint>
#include <string>
#include <vector>

namespace wavg {

enum class Overwrite { no, yes };

class AtomicFile {
 public:
  // Creates an empty temporary file in the target's directory. Refuses an existing target unless `overwrite`.
  AtomicFile(std::string target, Overwrite overwrite);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::string& tmp_path() const { return m_tmp; }
  const std::string& target() const { return m_target; }
  // Flushes the temporary file to disk and renames it to the target.
  void commit();

 private:
  std::string m_target;
  std::string m_tmp;
  Overwrite m_overwrite;
  bool m_committed = false;
};

// Writes all `bytes` of `data` at offset `at` of `fd`, retrying short and interrupted writes; throws Error (exit 1)
// naming `display` when the write fails (a full disk). For writers that lay out their file first and fill it in place.
void pwrite_all(int fd, const void* data, std::uint64_t bytes, std::uint64_t at, const std::string& display);

// Removes every temporary output not yet committed. Async-signal-safe: for handlers of fatal signals.
void remove_pending_outputs() noexcept;

// Refuses (usage error) an output path that names one of the inputs, by path or by identity (same inode).
// Also records the inputs as protected (see protect_input).
void check_output_not_input(const std::string& output, const std::vector<std::string>& inputs);

// Creates an empty temporary file that belongs to the pending output whose temporary file is `main_tmp` (an
// AtomicFile's tmp_path()) and returns its path: MAIN_TMP.N, so a signal handler can name it without allocating.
// It is removed with that output on failure or signal, and renamed to `target` just before it on commit(); if the
// commit fails, the companions already placed are removed again. For outputs of several files (TF.js shards).
std::string add_companion(const std::string& main_tmp, const std::string& target);

// Records a file that an input consists of (a TF.js shard, or an input given on the command line), so that
// check_not_protected refuses to write over it. Counted: each protect_input is undone by one unprotect_input.
void protect_input(const std::string& path);
void unprotect_input(const std::string& path);
// Throws Error (exit 1) naming `output` when it is the same file as a protected input, by path or by inode.
void check_not_protected(const std::string& output);

}  // namespace wavg
