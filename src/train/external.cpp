// External trainers. Each round, worker k's command is run with {init} (the global checkpoint), {out} (where it
// must write its model), {rank} and {round} filled in; at most --jobs run at once. A command that fails, or exits 0
// without writing {out}, is retried --retries times and then left out of the round with a warning. The outputs that
// came back are merged with wavg's engine and mean (structure and metadata from the lowest rank's file, so a Keras
// model stays a Keras model), and the result is the next round's {init}. Fewer than --min-workers successes end the
// run with an error; the last completed round stays as it was, and --resume starts again from it.

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <map>

#include "pipeline/pipeline.hpp"
#include "train/driver.hpp"
#include "train/model_io.hpp"
#include "train/run_dir.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/error.hpp"

namespace wavg::train {

namespace fs = std::filesystem;

namespace {

// Quotes a value for /bin/sh, so paths with spaces or quotes pass as one word.
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string fill(std::string cmd, const std::map<std::string, std::string>& values) {
  for (const auto& [key, value] : values)
    for (std::size_t at = cmd.find(key); at != std::string::npos; at = cmd.find(key, at + value.size()))
      cmd.replace(at, key.size(), value);
  return cmd;
}

pid_t spawn(const std::string& cmd) {
  const pid_t pid = ::fork();
  if (pid < 0) fail("--train-cmd", std::string("cannot start a worker: ") + std::strerror(errno));
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

std::string exit_text(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

struct Job {
  std::size_t rank = 0;
  std::size_t attempt = 0;
};

// Runs every worker's command for one round; returns the ranks whose output exists, in rank order.
std::vector<std::size_t> run_round(const LocalSgdOptions& o, std::uint64_t round, const std::string& init,
                                   const std::vector<std::string>& outs) {
  const std::size_t jobs = o.jobs ? o.jobs : o.workers;
  std::deque<Job> queue;
  for (std::size_t k = 0; k < o.workers; ++k) queue.push_back({k, 0});
  std::map<pid_t, Job> running;
  std::vector<bool> ok(o.workers, false);
  while (!queue.empty() || !running.empty()) {
    while (!queue.empty() && running.size() < jobs) {
      const Job job = queue.front();
      queue.pop_front();
      std::error_code ec;
      fs::remove(outs[job.rank], ec);
      const std::string cmd = fill(o.train_cmd, {{"{init}", shell_quote(init)},
                                                 {"{out}", shell_quote(outs[job.rank])},
                                                 {"{rank}", std::to_string(job.rank)},
                                                 {"{round}", std::to_string(round)},
                                                 {"{workers}", std::to_string(o.workers)},
                                                 {"{seed}", std::to_string(o.seed)}});
      if (o.verbose > 0) std::fprintf(stderr, "wavg: round %llu: worker %zu: %s\n",
                                      static_cast<unsigned long long>(round), job.rank, cmd.c_str());
      running.emplace(spawn(cmd), job);
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      fail("--train-cmd", std::string("waiting for workers: ") + std::strerror(errno));
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const Job job = it->second;
    running.erase(it);
    const bool wrote = fs::exists(outs[job.rank]);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && wrote) {
      ok[job.rank] = true;
      continue;
    }
    const std::string why = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "wrote no output" : exit_text(status);
    if (job.attempt < o.retries) {
      std::fprintf(stderr, "wavg: warning: round %llu: worker %zu failed (%s); retry %zu of %zu\n",
                   static_cast<unsigned long long>(round), job.rank, why.c_str(), job.attempt + 1, o.retries);
      queue.push_back({job.rank, job.attempt + 1});
    } else {
      std::fprintf(stderr, "wavg: warning: round %llu: worker %zu failed (%s); left out of this round\n",
                   static_cast<unsigned long long>(round), job.rank, why.c_str());
    }
  }
  std::vector<std::size_t> done;
  for (std::size_t k = 0; k < o.workers; ++k)
    if (ok[k]) done.push_back(k);
  return done;
}

void copy_atomically(const std::string& from, const std::string& to) {
  AtomicFile out(to, Overwrite::yes);
  std::error_code ec;
  fs::copy_file(from, out.tmp_path(), fs::copy_options::overwrite_existing, ec);
  if (ec) fail(to, "cannot copy " + from + ": " + ec.message());
  out.commit();
}

}  // namespace

RunSummary run_external(const LocalSgdOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  RunDir dir(o, {{"train_cmd", o.train_cmd}, {"workers", o.workers}, {"init", o.init_file}});
  RunState state = dir.state();
  Progress progress(!o.quiet);
  const std::string ext = extension_for(o.format);
  while (state.round < o.rounds) {
    const std::uint64_t round = state.round + 1;
    const std::string init = state.round == 0 ? o.init_file : dir.checkpoint(state.round);
    const fs::path work = fs::path(o.out_dir) / ("round-" + std::to_string(round) + ".work");
    fs::create_directories(work);
    std::vector<std::string> outs;
    for (std::size_t k = 0; k < o.workers; ++k) outs.push_back((work / ("worker-" + std::to_string(k) + ext)).string());
    progress.show("round " + std::to_string(round) + "/" + std::to_string(o.rounds) + ": training", true);
    const std::vector<std::size_t> done = run_round(o, round, init, outs);
    if (done.size() < o.min_workers)
      fail(o.out_dir, "round " + std::to_string(round) + ": " + std::to_string(done.size()) + " of " +
                          std::to_string(o.workers) + " workers succeeded, fewer than --min-workers " +
                          std::to_string(o.min_workers) + "; round " + std::to_string(state.round) +
                          " is the last completed one (--resume continues from it)");
    std::vector<std::string> paths;
    for (std::size_t k : done) paths.push_back(outs[k]);
    pipeline::merge_files({paths, dir.checkpoint(round), o.format, Overwrite::yes, "local-sgd", {}});
    std::error_code ec;
    fs::remove_all(work, ec);
    state.round = round;
    const double seconds =
        state.seconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    RunState done_state = state;
    done_state.seconds = seconds;
    dir.complete({round, round, NAN, NAN, NAN, seconds}, done_state);
  }
  if (state.round > 0) copy_atomically(dir.checkpoint(state.round), dir.final_path());
  RunSummary s;
  s.rounds = state.round;
  return s;
}

}  // namespace wavg::train
