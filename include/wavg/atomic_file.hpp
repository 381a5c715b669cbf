#pragma once
// Output goes to a temporary file beside the target and is renamed over it only on commit(). If the process fails,
// throws, or is interrupted by SIGINT/SIGTERM/SIGHUP, the temporary file is removed and the target is untouched.

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

// Removes every temporary output not yet committed. Async-signal-safe: for handlers of fatal signals.
void remove_pending_outputs() noexcept;

// Refuses (usage error) an output path that names one of the inputs, by path or by identity (same inode).
void check_output_not_input(const std::string& output, const std::vector<std::string>& inputs);

}  // namespace wavg
