#pragma once
// The progress line of merge, convert, soup and align: when stderr is a terminal (and without -q), one line redrawn
// at most five times a second with the percentage of bytes done, the rate and the time left, erased when the job
// ends or fails; nothing at all otherwise (zstd's and ccache's conventions: a log or a pipe gets no control codes).
// With --progress json, one JSON object a line instead, wherever stderr goes, at the same moments and with the same
// numbers (a program that runs wavg shows them without scraping the terminal line); --progress none shows nothing.

#include <chrono>
#include <cstdint>
#include <string>

#include "cli/common.hpp"
#include "wavg/engine.hpp"

namespace wavg::cli {

class ProgressLine {
 public:
  // `what` names the job on the line ("merge"); `inputs` scales the bytes of one input to the bytes read.
  ProgressLine(const Verbosity& v, std::string what, std::size_t inputs = 1);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Shows `done` of `total` bytes of one input; a smaller `done` than the last starts a new pass (new rate).
  void update(std::uint64_t done, std::uint64_t total);
  // Shows the engine's progress through each of its passes.
  void follow(Engine& engine);
  // Removes the line (before other output, and at the end).
  void erase();
  // Erases the line of the job in progress, if any, so that a note starts on a clean line (note() calls it).
  static void erase_current();

 private:
  using Clock = std::chrono::steady_clock;
  bool m_enabled;
  bool m_json;
  bool m_shown = false;
  std::uint64_t m_pass = 1;
  std::string m_what;
  std::uint64_t m_scale;
  std::uint64_t m_last_done = 0;
  Clock::time_point m_pass_start;
  Clock::time_point m_last_draw;
};

}  // namespace wavg::cli
