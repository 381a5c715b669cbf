#pragma once
// Runs the built wavg binary from a unit test and captures what it did.

#include <functional>
#include <string>

namespace wavg::test {

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs `wavg ARGS` through /bin/sh (ARGS is shell-quoted by the caller), with extra environment `env` ("A=1 B=2").
RunResult run_wavg(const std::string& args, const std::string& env = "");

// Runs `body` in a forked child whose stderr is captured; the child exits 0 when `body` returns. exit_code is the
// child's status, or 128 + the signal that ended it. For tests of what a signal handler does to the process.
RunResult run_in_child(const std::function<void()>& body);

}  // namespace wavg::test
