#include "cli/run_plot.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/plot.hpp"
#include "wavg/error.hpp"

namespace wavg::cli {

namespace {

constexpr const char* k_header = "round,step,train_loss,test_loss,test_accuracy,seconds";
constexpr std::size_t k_max_rows = 10'000'000;  // far beyond any run; a bigger file is not a log wavg wrote

// Parses one field: empty is NaN (unknown), anything else must be a whole finite number.
bool parse_field(const std::string& text, double& value) {
  if (text.empty()) return value = NAN, true;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(value);
}

nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

RunLog read_run_log(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "log.csv").string();
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot read it (is " + dir + " a local-sgd run folder?)");
  RunLog log{dir, {}, {}, {}, {}};
  std::string line;
  if (!std::getline(in, line) || line != k_header) fail(path, "not a local-sgd log (its first line is not the header)");
  for (std::size_t line_no = 2; std::getline(in, line); ++line_no) {
    if (line.empty()) continue;
    double f[6];
    std::size_t start = 0, n = 0;
    for (; n < 6 && start <= line.size(); ++n) {
      const std::size_t comma = std::min(line.find(',', start), line.size());
      if (!parse_field(line.substr(start, comma - start), f[n])) n = 7;
      start = comma + 1;
    }
    if (n != 6 || start <= line.size() || std::isnan(f[0]) || std::isnan(f[1]) || log.round.size() >= k_max_rows)
      fail(path, "line " + std::to_string(line_no) + " is not a row of 6 numbers (round,step,...)");
    log.round.push_back(f[0]), log.step.push_back(f[1]), log.test_loss.push_back(f[3]);
    log.test_accuracy.push_back(f[4]);
  }
  bool scored = false;
  for (std::size_t i = 0; i < log.round.size(); ++i) scored |= std::isfinite(log.test_loss[i] + log.test_accuracy[i]);
  if (!scored) fail(path, "has no test loss or accuracy to show (a --train-cmd run logs none)");
  return log;
}

void print_runs_json(const std::vector<RunLog>& runs) {
  nlohmann::json out = nlohmann::json::array();
  for (const RunLog& r : runs) {
    nlohmann::json rounds = nlohmann::json::array();
    for (std::size_t i = 0; i < r.round.size(); ++i)
      rounds.push_back({{"round", r.round[i]},
                        {"step", r.step[i]},
                        {"test_loss", number(r.test_loss[i])},
                        {"test_accuracy", number(r.test_accuracy[i])}});
    out.push_back({{"dir", r.dir}, {"rounds", rounds}});
  }
  std::printf("%s\n", nlohmann::json{{"runs", out}}.dump(2).c_str());
}

void plot_runs(const std::vector<RunLog>& runs, const std::string& path, Overwrite overwrite) {
  const std::string x_label = "steps per worker (a dot: an average, the end of a round)";
  plot::Panel loss{x_label, "test loss", {}, {}, {}, false}, accuracy{x_label, "test accuracy", {}, {}, {}, false};
  std::string dirs;
  for (const RunLog& r : runs) {
    dirs += (dirs.empty() ? "" : ", ") + r.dir;
    loss.series.push_back({r.dir, r.step, r.test_loss, plot::Style::line, {}, {}});
    accuracy.series.push_back({r.dir, r.step, r.test_accuracy, plot::Style::line, {}, {}});
    for (std::size_t i = 0; i < r.round.size(); ++i) {
      char tip[160];
      std::snprintf(tip, sizeof tip, "round %.0f, step %.0f: test loss %.6g", r.round[i], r.step[i], r.test_loss[i]);
      loss.series.back().tips.push_back(r.dir + " " + tip);
      std::snprintf(tip, sizeof tip, "round %.0f, step %.0f: accuracy %.6g", r.round[i], r.step[i], r.test_accuracy[i]);
      accuracy.series.back().tips.push_back(r.dir + " " + tip);
    }
  }
  std::string subtitle = "last round's test accuracy:";
  for (const RunLog& r : runs) {
    char text[32];
    std::snprintf(text, sizeof text, " %.4f", r.test_accuracy.back());
    subtitle += (&r == &runs.front() ? " " : ", ") + r.dir + text;
  }
  plot::write(path, {"wavg local-sgd: " + dirs, subtitle, {loss, accuracy}}, overwrite);
}

}  // namespace wavg::cli
