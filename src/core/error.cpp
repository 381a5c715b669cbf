#include "wavg/error.hpp"

#include <cstdio>
#include <cstdlib>

namespace wavg {

namespace {
std::string first_line(const std::vector<Problem>& problems) {
  if (problems.empty()) return "unknown error";
  const Problem& p = problems.front();
  return p.file.empty() ? p.what : p.file + ": " + p.what;
}
}  // namespace

Error::Error(ExitCode code, std::string file, std::string what)
    : Error(code, std::vector<Problem>{{std::move(file), std::move(what)}}) {}

Error::Error(ExitCode code, std::vector<Problem> problems)
    : std::runtime_error(first_line(problems)), m_code(code), m_problems(std::move(problems)) {}

void fail(const std::string& file, const std::string& what) { throw Error(ExitCode::runtime, file, what); }

void fail_usage(const std::string& what) { throw Error(ExitCode::usage, "", what); }

void assertion_failed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "wavg: internal error: assertion '%s' failed at %s:%d; please report this bug\n", expr, file,
               line);
  std::abort();
}

}  // namespace wavg
