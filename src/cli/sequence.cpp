#include "cli/sequence.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>

#include "wavg/error.hpp"
#include "wavg/format_facts.hpp"

namespace wavg::cli {

namespace {

constexpr const char* k_sequence = "Checkpoint sequences";

// The default numbering: strip extensions (a dot and letters or digits, starting with a letter) from the end, then
// take the digits that end what is left: round-0010.h5, checkpoint_epoch_12.pt, model.ckpt-2000 and
// model.ckpt-2000.index are numbered; final.h5 and log.csv are not.
std::string default_number(const std::string& name) {
  std::string stem = name;
  for (std::size_t dot; (dot = stem.find_last_of('.')) != std::string::npos && dot + 1 < stem.size();) {
    const std::string ext = stem.substr(dot + 1);
    const bool alnum = std::all_of(ext.begin(), ext.end(), [](unsigned char c) { return std::isalnum(c); });
    if (!alnum || !std::isalpha(static_cast<unsigned char>(ext[0]))) break;
    stem.erase(dot);
  }
  std::size_t begin = stem.size();
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(stem[begin - 1]))) --begin;
  return stem.substr(begin);
}

std::string exact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::regex compile(const std::string& pattern) {
  std::regex re;
  try {
    re = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    fail_usage("--pattern '" + pattern + "' is not a regular expression: " + e.what());
  }
  if (re.mark_count() < 1)
    fail_usage("--pattern '" + pattern + "' has no group: its first group must capture the checkpoint's number");
  return re;
}

// Returns the N highest-numbered checkpoints of `dir` at most `bound`, oldest first, skipping (said with -v) what a
// format's library left of a save it has not finished.
std::vector<std::string> last_checkpoints(const SequenceCli& s, const std::string& dir, const Verbosity& v) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw Error(ExitCode::usage, dir, "is not a directory (--last takes one directory of checkpoints)");
  const std::regex re = s.pattern.empty() ? std::regex() : compile(s.pattern);
  std::map<std::uint64_t, std::string> numbered;
  std::map<std::string, std::string> schemes;  // what precedes the number -> a file named so
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    // A checkpoint is a file, or a folder (a DCP step-9000/, a DeepSpeed global_step9000/, a Hugging Face
    // checkpoint-500/): whichever the numbering matches.
    if (!entry.is_regular_file(ec) && !entry.is_directory(ec)) continue;
    const std::string name = entry.path().filename().string();
    if (const char* format = unfinished_save(name)) {
      note(v, 1, "--last: skipping " + entry.path().string() + ", an unfinished " + format + " save");
      continue;
    }
    std::string digits;
    if (s.pattern.empty()) {
      digits = default_number(name);
      if (digits.empty()) continue;
    } else {
      std::smatch m;
      if (!std::regex_match(name, m, re) || !m[1].matched) continue;
      digits = m[1].str();
    }
    errno = 0;
    char* end = nullptr;
    const unsigned long long number = std::strtoull(digits.c_str(), &end, 10);
    if (digits.empty() || end != digits.c_str() + digits.size() || errno == ERANGE)
      throw Error(ExitCode::usage, entry.path().string(),
                  "--pattern's group matched '" + digits + "', which is not a number");
    if (s.upper_opt && s.upper_opt->count() > 0 && number > s.upper_bound) continue;
    if (s.pattern.empty()) {  // what precedes the number: one scheme per directory, else ask for --pattern
      const auto [it, added] = schemes.emplace(name.substr(0, name.rfind(digits)), name);
      if (!added && name < it->second) it->second = name;
    }
    auto [it, fresh] = numbered.emplace(number, entry.path().string());
    if (!fresh)
      throw Error(ExitCode::usage, dir,
                  "two files are numbered " + std::to_string(number) + ": " +
                      std::filesystem::path(it->second).filename().string() + " and " + name +
                      " (give --pattern to tell checkpoints from other files)");
  }
  if (ec) throw Error(ExitCode::runtime, dir, "cannot list the directory: " + ec.message());
  if (schemes.size() > 1)
    throw Error(ExitCode::usage, dir,
                "holds two numbering schemes (" + schemes.begin()->second + ", " + std::next(schemes.begin())->second +
                    "): give --pattern to say which files are the sequence");
  if (numbered.size() < s.last)
    throw Error(ExitCode::usage, dir,
                "--last " + std::to_string(s.last) + " needs " + std::to_string(s.last) +
                    " numbered checkpoints, found " + std::to_string(numbered.size()));
  std::vector<std::string> paths;
  auto it = numbered.end();
  std::advance(it, -static_cast<std::ptrdiff_t>(s.last));
  for (; it != numbered.end(); ++it) paths.push_back(it->second);
  return paths;
}

}  // namespace

void add_sequence_options(CLI::App& app, SequenceCli& s) {
  app.add_option("--last", s.last, "Merge the N highest-numbered checkpoints of the one input directory")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20).description(""))
      ->type_name("N")
      ->group(k_sequence);
  s.upper_opt = app.add_option("--upper-bound", s.upper_bound, "--last: ignore checkpoints numbered above M")
                    ->type_name("M")
                    ->group(k_sequence);
  app.add_option("--pattern", s.pattern,
                 "--last: regular expression matching a whole file name; its first group is the number "
                 "(default: the last number before the extensions)")
      ->type_name("REGEX")
      ->group(k_sequence);
  app.add_option("--schedule", s.schedule,
                 "Weights over the inputs in order, oldest first: uniform, ema:D (decay D) or linear")
      ->type_name("uniform|ema:D|linear")
      ->group(k_sequence);
}

std::vector<double> schedule_weights(const std::string& schedule, std::size_t n) {
  std::vector<double> w(n, 1.0);
  if (schedule == "uniform") return w;
  if (schedule == "linear") {
    for (std::size_t k = 0; k < n; ++k) w[k] = static_cast<double>(k + 1);
    return w;
  }
  if (schedule.rfind("ema:", 0) == 0) {
    const std::string text = schedule.substr(4);
    char* end = nullptr;
    errno = 0;
    const double d = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !(d >= 0 && d < 1))
      fail_usage("--schedule " + schedule + ": the decay must be a number in [0, 1)");
    // e_1 = x_1, e_k = D e_(k-1) + (1 - D) x_k unrolled: x_1 weighs D^(n-1), x_k (k > 1) weighs (1 - D) D^(n-k).
    for (std::size_t k = 0; k < n; ++k) {
      const double decayed = std::pow(d, static_cast<double>(n - 1 - k));
      w[k] = k == 0 ? decayed : (1 - d) * decayed;
    }
    return w;
  }
  fail_usage("--schedule '" + schedule + "' is not one of uniform, ema:D, linear");
}

void apply_sequence(const SequenceCli& s, std::vector<std::string>& inputs, std::string& weights, const Verbosity& v) {
  const bool bounded = s.upper_opt && s.upper_opt->count() > 0;
  if (s.last == 0 && (bounded || !s.pattern.empty())) fail_usage("--upper-bound and --pattern need --last");
  if (s.last > 0) {
    if (inputs.size() != 1)
      fail_usage("--last takes one directory of checkpoints, got " + std::to_string(inputs.size()) + " inputs");
    inputs = last_checkpoints(s, inputs.front(), v);
  }
  if (s.last == 0 && s.schedule.empty()) return;
  std::vector<double> w;
  if (!s.schedule.empty()) {
    if (!weights.empty()) fail_usage("give either --schedule or --weights, not both");
    w = schedule_weights(s.schedule, inputs.size());
  } else {
    w = parse_weights(weights);
  }
  // The sequence is oldest first. What is not averaged (epoch and step counters, integer buffers, the format's
  // metadata) comes from input 1, as in any merge; fairseq's average_checkpoints.py and every user expect it from
  // the newest checkpoint, so the newest becomes input 1: this is the one place that decides it.
  std::reverse(inputs.begin(), inputs.end());
  std::reverse(w.begin(), w.end());
  for (std::size_t k = 0; k < inputs.size(); ++k)
    note(v, 1,
         "sequence: " + inputs[k] + (k == 0 ? " (newest: input 1, kept values and metadata)" : "") +
             (s.schedule.empty() ? "" : ", weighs " + exact(w[k]) + " (" + s.schedule + ")"));
  if (w.empty()) return;
  weights.clear();
  for (std::size_t k = 0; k < w.size(); ++k) weights += (k ? "," : "") + exact(w[k]);
}

std::string sequence_note(const SequenceCli& s) {
  std::string text;
  if (s.last > 0) text += ", last " + std::to_string(s.last);
  if (!s.schedule.empty()) text += ", schedule " + s.schedule;
  return text;
}

std::size_t newest_input(const SequenceCli& s, std::size_t n) {
  // apply_sequence made the newest input 1.
  return (s.last > 0 || !s.schedule.empty()) && n > 0 ? 0 : k_no_input;
}

}  // namespace wavg::cli
