#pragma once
// The output directory of a local-SGD run: round checkpoints, log.csv, and state.json, the small record of the
// last completed round that --resume starts from. A round is complete once its checkpoint is renamed into place
// and state.json names it; both are written atomically, checkpoint first, so an interruption at any moment leaves
// the last completed round intact.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "train/options.hpp"
#include "wavg/atomic_file.hpp"

namespace wavg::train {

// Writes `text` to `path` through an AtomicFile.
void write_text_atomically(const std::string& path, const std::string& text, Overwrite overwrite = Overwrite::yes);

struct RunState {
  std::uint64_t round = 0;  // rounds completed
  std::uint64_t step = 0;   // optimizer steps completed by every worker
  double seconds = 0;       // training time so far, summed over restarts
};

struct LogRow {
  std::uint64_t round = 0, step = 0;
  double train_loss = NAN, test_loss = NAN, test_accuracy = NAN;  // NaN: unknown (external trainers)
  double seconds = 0;
};

class RunDir {
 public:
  // Opens or creates the directory. Without --resume a directory that already holds a run is refused unless
  // --force; with --resume the run's settings (`settings`) must match the recorded ones.
  RunDir(const LocalSgdOptions& o, nlohmann::json settings);

  // Reads the last completed round of the run in `dir` without touching anything (for MPI ranks other than 0).
  static RunState read_state(const std::string& dir);
  static std::string checkpoint_in(const std::string& dir, const std::string& format, std::uint64_t round);

  const RunState& state() const { return m_state; }
  std::string checkpoint(std::uint64_t round) const;
  std::string final_path() const;
  // Records a completed round: appends to log.csv, then replaces state.json.
  void complete(const LogRow& row, const RunState& state);

 private:
  std::string file(const std::string& name) const;
  void write_state();

  std::string m_dir, m_format, m_ext;
  nlohmann::json m_settings;
  RunState m_state;
};

// A one-line progress display on stderr, redrawn at most a few times a second, only when stderr is a terminal.
class Progress {
 public:
  explicit Progress(bool enabled);
  ~Progress();
  void show(const std::string& text, bool force = false);

 private:
  bool m_enabled;
  bool m_drawn = false;
  std::chrono::steady_clock::time_point m_last{};
};

}  // namespace wavg::train
