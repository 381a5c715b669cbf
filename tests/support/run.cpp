#include "support/run.hpp"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/h5raw.hpp"

namespace wavg::test {

RunResult run_wavg(const std::string& args, const std::string& env) {
  TempDir dir;
  const std::string cmd = env + " '" + std::string(WAVG_EXE) + "' " + args + " >" + (dir / "out") + " 2>" + (dir / "err");
  const int status = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  return r;
}

}  // namespace wavg::test
