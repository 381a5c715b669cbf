#pragma once
// Runs the built wavg binary from a unit test and captures what it did.

#include <string>

namespace wavg::test {

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs `wavg ARGS` through /bin/sh (ARGS is shell-quoted by the caller), with extra environment `env` ("A=1 B=2").
RunResult run_wavg(const std::string& args, const std::string& env = "");

}  // namespace wavg::test
