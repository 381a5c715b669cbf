#include "support/run.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/h5raw.hpp"

namespace wavg::test {

RunResult run_wavg(const std::string& args, const std::string& env) {
  TempDir dir;
  const std::string cmd =
      env + " '" + std::string(WAVG_EXE) + "' " + args + " >" + (dir / "out") + " 2>" + (dir / "err");
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

RunResult run_in_child(const std::function<void()>& body) {
  RunResult r;
  int pipe_fd[2];
  if (::pipe(pipe_fd) != 0) return r;
  const pid_t pid = ::fork();
  if (pid < 0) return r;
  if (pid == 0) {
    ::dup2(pipe_fd[1], STDERR_FILENO);
    ::close(pipe_fd[0]);
    ::close(pipe_fd[1]);
    body();
    ::_exit(0);
  }
  ::close(pipe_fd[1]);
  char buf[512];
  for (ssize_t n; (n = ::read(pipe_fd[0], buf, sizeof buf)) > 0;) r.err.append(buf, static_cast<std::size_t>(n));
  ::close(pipe_fd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace wavg::test
