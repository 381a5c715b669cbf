#include "train/run_dir.hpp"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "train/model_io.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/error.hpp"

namespace wavg::train {

namespace fs = std::filesystem;

void write_text_atomically(const std::string& path, const std::string& text, Overwrite overwrite) {
  AtomicFile file(path, overwrite);
  {
    std::ofstream out(file.tmp_path(), std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) fail(path, "cannot write");
  }
  file.commit();
}

namespace {

std::string number(double v) {
  if (std::isnan(v)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(path, "nothing to resume (cannot read it)");
  try {
    nlohmann::json j;
    in >> j;
    return j;
  } catch (const std::exception& e) {
    fail(path, std::string("not a run state: ") + e.what());
  }
}

RunState state_from(const nlohmann::json& j, const std::string& path) {
  RunState s;
  try {
    s.round = j.at("round").get<std::uint64_t>();
    s.step = j.at("step").get<std::uint64_t>();
    s.seconds = j.at("seconds").get<double>();
  } catch (const std::exception& e) {
    fail(path, std::string("not a run state: ") + e.what());
  }
  return s;
}

}  // namespace

RunState RunDir::read_state(const std::string& dir) {
  const std::string path = (fs::path(dir) / "state.json").string();
  return state_from(read_json(path), path);
}

std::string RunDir::checkpoint_in(const std::string& dir, const std::string& format, std::uint64_t round) {
  char name[32];
  std::snprintf(name, sizeof name, "round-%04llu", static_cast<unsigned long long>(round));
  return (fs::path(dir) / (name + extension_for(format))).string();
}

RunDir::RunDir(const LocalSgdOptions& o, nlohmann::json settings)
    : m_dir(o.out_dir), m_format(o.format), m_ext(extension_for(o.format)), m_settings(std::move(settings)) {
  std::error_code ec;
  fs::create_directories(m_dir, ec);
  if (ec || !fs::is_directory(m_dir)) fail(m_dir, "cannot create the output directory: " + ec.message());
  const std::string state_path = file("state.json");
  const bool has_run = fs::exists(state_path);
  if (o.resume) {
    if (!has_run) fail(m_dir, "nothing to resume (no state.json)");
    const nlohmann::json j = read_json(state_path);
    m_state = state_from(j, state_path);
    std::vector<Problem> problems;
    const nlohmann::json recorded = j.value("settings", nlohmann::json::object());
    for (const auto& [key, value] : m_settings.items())
      if (recorded.value(key, nlohmann::json()) != value)
        problems.push_back({state_path, "--resume: " + key + " was " + recorded.value(key, nlohmann::json()).dump() +
                                            ", now " + value.dump()});
    if (!problems.empty()) throw Error(ExitCode::incompatible, std::move(problems));
    // Rows logged after the last completed round (an interruption between log and state) are dropped.
    std::ifstream log(file("log.csv"));
    std::string line, kept;
    while (std::getline(log, line)) {
      const bool header = line.rfind("round,", 0) == 0;
      if (header || (!line.empty() && std::stoull(line.substr(0, line.find(','))) <= m_state.round))
        kept += line + "\n";
    }
    write_text_atomically(file("log.csv"), kept);
  } else {
    if (has_run && !o.force)
      throw Error(ExitCode::usage, m_dir, "already holds a run (use --resume to continue it or --force to restart)");
    write_text_atomically(file("log.csv"), "round,step,train_loss,test_loss,test_accuracy,seconds\n");
    write_state();
  }
}

std::string RunDir::file(const std::string& name) const { return (fs::path(m_dir) / name).string(); }

std::string RunDir::checkpoint(std::uint64_t round) const { return checkpoint_in(m_dir, m_format, round); }

std::string RunDir::final_path() const { return file("final" + m_ext); }

void RunDir::complete(const LogRow& row, const RunState& state) {
  {
    std::ofstream log(file("log.csv"), std::ios::app);
    log << row.round << ',' << row.step << ',' << number(row.train_loss) << ',' << number(row.test_loss) << ','
        << number(row.test_accuracy) << ',' << number(row.seconds) << '\n';
    if (!log) fail(file("log.csv"), "cannot append");
  }
  m_state = state;
  write_state();
}

void RunDir::write_state() {
  nlohmann::json j{{"round", m_state.round},
                   {"step", m_state.step},
                   {"seconds", m_state.seconds},
                   {"checkpoint", m_state.round ? fs::path(checkpoint(m_state.round)).filename().string() : ""},
                   {"settings", m_settings}};
  write_text_atomically(file("state.json"), j.dump(2) + "\n");
}

Progress::Progress(bool enabled) : m_enabled(enabled && ::isatty(STDERR_FILENO)) {}

Progress::~Progress() {
  if (m_drawn) std::fprintf(stderr, "\n");
}

void Progress::show(const std::string& text, bool force) {
  if (!m_enabled) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && m_drawn && now - m_last < std::chrono::milliseconds(200)) return;
  m_last = now;
  m_drawn = true;
  std::fprintf(stderr, "\r\033[K%s", text.c_str());
  std::fflush(stderr);
}

}  // namespace wavg::train
