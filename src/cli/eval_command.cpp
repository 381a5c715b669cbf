#include "cli/eval_command.hpp"

#include <sys/wait.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "wavg/error.hpp"

namespace wavg::cli {

namespace {

constexpr const char* k_placeholder = "{model}";

// Quotes a path for /bin/sh: inside single quotes only ' itself needs escaping.
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string substitute(const std::string& command, const std::string& model) {
  std::string out;
  std::size_t start = 0;
  for (std::size_t at; (at = command.find(k_placeholder, start)) != std::string::npos;) {
    out += command.substr(start, at - start) + shell_quote(model);
    start = at + std::char_traits<char>::length(k_placeholder);
  }
  return out + command.substr(start);
}

std::string last_line(const std::string& text) {
  const std::size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const std::size_t newline = text.find_last_of('\n', end);
  std::string line = text.substr(newline == std::string::npos ? 0 : newline + 1, std::string::npos);
  line.erase(line.find_last_not_of(" \t\r\n") + 1);
  line.erase(0, line.find_first_not_of(" \t"));
  return line;
}

}  // namespace

void add_eval_option(CLI::App& app, std::string& command) {
  app.add_option("--eval", command,
                 "After the merge, score each input and the output with this command ({model}: the checkpoint's "
                 "path; the last line of its output is the score)");
}

void check_eval_command(const std::string& command) {
  if (command.find(k_placeholder) == std::string::npos)
    fail_usage("--eval '" + command + "' has no {model}, where the checkpoint's path goes");
}

double evaluate(const std::string& command, const std::string& model) {
  std::fflush(stdout);  // the command's stderr and ours interleave in order
  FILE* pipe = popen(substitute(command, model).c_str(), "r");
  if (!pipe) fail(model, std::string("--eval: cannot run the command: ") + std::strerror(errno));
  std::string output;
  char buf[4096];
  for (std::size_t got; (got = std::fread(buf, 1, sizeof buf, pipe)) > 0;) {
    output.append(buf, got);
    if (output.size() > (1u << 20)) output.erase(0, output.size() - 4096);  // only the last line matters
  }
  const int status = pclose(pipe);
  if (status == -1) fail(model, "--eval: lost the command's exit status");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail(model, "--eval command " + (WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                                       : std::string("was killed by a signal")));
  const std::string line = last_line(output);
  char* end = nullptr;
  errno = 0;
  const double score = std::strtod(line.c_str(), &end);
  if (line.empty() || end != line.c_str() + line.size() || errno == ERANGE || !std::isfinite(score))
    fail(model, "--eval: the last line of the command's output is not a number: '" + clipped(line, 80) + "'");
  return score;
}

std::string score_text(double score) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", score);
  return buf;
}

void print_scores(const std::string& command, const std::vector<std::string>& inputs, const std::string& output) {
  for (const std::string& path : inputs)
    std::printf("score %s %s\n", score_text(evaluate(command, path)).c_str(), path.c_str());
  std::printf("score %s %s (merged)\n", score_text(evaluate(command, output)).c_str(), output.c_str());
}

}  // namespace wavg::cli
