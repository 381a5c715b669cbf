#pragma once
// Output goes to a temporary file beside the target and is renamed over it only on commit(). If the process fails,
// throws, or is interrupted by SIGINT/SIGTERM/SIGHUP, the temporary file is removed and the target is untouched.
//
// An output of several files (TF.js: model.json and its shards) is one AtomicFile, the main file, with companions:
// files created beside the target that commit() puts in place before the main file, never over an existing file.
// A reader finds the main file, so the output switches from old to new in the main file's rename: a companion
// named like an old output's file takes a name unique to the run (run_token), and the old output's files are
// retired (removed) only after the switch. commit() holds interrupts back while it places the files, so a signal
// finds either nothing placed or everything. (An output that is a directory: atomic_directory.hpp.)

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "wavg/output_lock.hpp"

namespace wavg {

enum class Overwrite { no, yes };

// What an atomic output of either kind (AtomicFile, AtomicDirectory) holds: the target, the temporary path it is
// written at until commit(), and whether commit() has run, so that its destructor knows whether to remove it.
class AtomicOutput {
 public:
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  const std::string& tmp_path() const { return m_tmp; }
  const std::string& target() const { return m_target; }

 protected:
  AtomicOutput(std::string target, Overwrite overwrite) : m_target(std::move(target)), m_overwrite(overwrite) {}
  ~AtomicOutput() = default;

  OutputLock m_lock;  // taken by the constructor before it looks at the target; released after the destructor
  std::string m_target;
  std::string m_tmp;
  Overwrite m_overwrite;
  bool m_committed = false;
};

class AtomicFile : public AtomicOutput {
 public:
  // Creates an empty temporary file in the target's directory. Refuses (usage error, exit 2) an existing target
  // unless `overwrite`, a target that is not a regular file even then (a device, a FIFO: --force replaces files,
  // nothing else), and a target that is one of `inputs`, by path or by identity. `inputs` lists every file the
  // inputs consist of (Reader::files()); the output's companions may not be any of them either.
  AtomicFile(std::string target, Overwrite overwrite, std::vector<std::string> inputs = {});
  ~AtomicFile();

  // Flushes the temporary files to disk, places the companions and then the main file, and removes the retired
  // files.
  void commit();
};

// Removes every temporary output not yet committed. Async-signal-safe: a cleanup of signals.hpp.
void remove_pending_outputs() noexcept;

// Refuses (usage error) an output path that names one of the inputs, by path or by identity (same inode). A check
// on the command line's paths, before any input is opened; AtomicFile repeats it over every input file.
void check_output_not_input(const std::string& output, const std::vector<std::string>& inputs);

// The functions below extend the pending output whose temporary file is `main_tmp` (an AtomicFile's tmp_path()):
// a writer is handed that path, not the AtomicFile.

// Throws Error (exit 1) naming `path` when it is one of the output's inputs' files (see AtomicFile).
void check_not_input(const std::string& main_tmp, const std::string& path);
// Returns six letters and digits unique to this run among the files beside the target (mkstemp's part of the
// temporary name), for companion names that must not meet an old output's files or another run's.
std::string run_token(const std::string& main_tmp);
// Creates an empty companion file that becomes `target` on commit, just before the main file, and returns the
// path to write it at (MAIN_TMP.N). Refuses a target that is an input file (exit 1) or already exists (exit 2).
// Removed with the output on failure or signal; if the commit fails, the companions already placed are removed.
std::string add_companion(const std::string& main_tmp, const std::string& target);
// As add_companion, for a companion whose name is fixed by its format (a TensorFlow checkpoint's data shard): when
// the output replaces an existing one (Overwrite::yes), an existing regular file `target` is replaced too, and
// commit() removes the old main file before placing it, so no reader pairs the old main file with the new
// companion.
std::string add_replacing_companion(const std::string& main_tmp, const std::string& target);
// Returns whether the pending output may replace existing files (--force): what removal.hpp's rule asks.
Overwrite overwrite_of(const std::string& main_tmp);
// Records a file of the output being replaced (an old model.json's shard), removed after the commit has put the
// new output in place, unless it is an input file or one of the new output's files. Only files removable_files
// (removal.hpp) allows.
void retire_after_commit(const std::string& main_tmp, const std::string& old_file);

}  // namespace wavg
