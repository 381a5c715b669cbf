// The terminal progress line. The first update draws at once (a short job shows it too, then erases it, so the line
// can be seen to work on any job), later ones at most every 200 ms; each redraw is one write of "\r" + the text +
// "erase to the end of the line", so a shorter line leaves nothing of the longer one behind.

#include "cli/progress.hpp"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "wavg/signals.hpp"

namespace wavg::cli {

namespace {

constexpr auto k_redraw = std::chrono::milliseconds(200);
ProgressLine* g_current = nullptr;  // the line on the terminal now; one job draws at a time
// Whether a line stands on the terminal, for the signal handlers: Ctrl-C ends the process without unwinding to
// erase(), and the shell's prompt would then follow the line's text.
std::atomic<bool> g_line_drawn{false};

// A cleanup the handlers run (signals.hpp): erases the line with write(2) only.
void erase_on_interrupt() noexcept {
  if (g_line_drawn.exchange(false)) signals::write_stderr("\r\033[K");
}

// "812 MB", "1.9 GB": decimal units, two or three significant digits.
std::string human_bytes(double bytes) {
  static const char* const k_units[] = {"B", "kB", "MB", "GB", "TB"};
  int unit = 0;
  while (bytes >= 1000 && unit < 4) bytes /= 1000, ++unit;
  char text[32];
  std::snprintf(text, sizeof text, bytes < 10 && unit > 0 ? "%.1f %s" : "%.0f %s", bytes, k_units[unit]);
  return text;
}

}  // namespace

ProgressLine::ProgressLine(const Verbosity& v, std::string what, std::size_t inputs)
    : m_enabled(v.progress == ProgressStyle::json ||
                (v.progress == ProgressStyle::automatic && !v.quiet && ::isatty(STDERR_FILENO) == 1)),
      m_json(v.progress == ProgressStyle::json),
      m_what(std::move(what)),
      m_scale(inputs),
      m_pass_start(Clock::now()) {
  if (m_enabled && !m_json) signals::add_cleanup(erase_on_interrupt);
}

ProgressLine::~ProgressLine() { erase(); }

void ProgressLine::follow(Engine& engine) {
  if (m_enabled) engine.on_progress([this](std::uint64_t done, std::uint64_t total) { update(done, total); });
}

void ProgressLine::update(std::uint64_t done, std::uint64_t total) {
  if (!m_enabled || total == 0) return;
  const Clock::time_point now = Clock::now();
  if (done < m_last_done) m_pass_start = now, ++m_pass;
  m_last_done = done;
  // A JSON reader also gets each pass's last step, so that its record of the job ends at 100%.
  if (m_shown && now - m_last_draw < k_redraw && !(m_json && done == total)) return;
  m_last_draw = now;
  const double seconds = std::chrono::duration<double>(now - m_pass_start).count();
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
  if (m_json) {
    const bool timed = seconds >= 0.25 && rate > 0;
    const double scale = static_cast<double>(m_scale);
    const nlohmann::ordered_json j = {
        {"job", m_what},
        {"pass", m_pass},
        {"percent", done * 100 / total},
        {"bytes_done", done * m_scale},
        {"bytes_total", total * m_scale},
        {"bytes_per_second", timed ? nlohmann::ordered_json(rate * scale) : nlohmann::ordered_json(nullptr)},
        {"seconds_left", timed ? nlohmann::ordered_json(std::llround(static_cast<double>(total - done) / rate))
                               : nlohmann::ordered_json(nullptr)}};
    std::fprintf(stderr, "%s\n", j.dump().c_str());
    m_shown = true;
    return;
  }
  std::string line = "wavg: " + m_what + " " + std::to_string(done * 100 / total) + "% of " +
                     human_bytes(static_cast<double>(total * m_scale));
  // The rate and time left only once they mean something (a quarter second into the pass).
  if (seconds >= 0.25 && rate > 0) {
    line += ", " + human_bytes(rate * static_cast<double>(m_scale)) + "/s, ";
    line += std::to_string(static_cast<long long>(static_cast<double>(total - done) / rate + 0.5)) + " s left";
  }
  // Marked drawn before the text goes out: a Ctrl-C between the two would otherwise leave the line standing.
  g_line_drawn = true;
  std::fprintf(stderr, "\r%s\033[K", line.c_str());
  m_shown = true;
  g_current = this;
}

void ProgressLine::erase() {
  if (g_current == this) g_current = nullptr;
  if (!m_shown || m_json) return;
  g_line_drawn = false;
  std::fputs("\r\033[K", stderr);
  m_shown = false;
}

void ProgressLine::erase_current() {
  if (g_current) g_current->erase();
}

}  // namespace wavg::cli
