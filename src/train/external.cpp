// External trainers. Each round, worker k's command is run with {init} (the global checkpoint), {out} (where it
// must write its model), {rank} and {round} filled in; at most --jobs run at once. A command that fails, or exits 0
// without writing {out}, is retried --retries times and then left out of the round with a warning. The outputs that
// came back are merged with wavg's engine and mean (structure and metadata from the lowest rank's file, so a Keras
// model stays a Keras model), and the result is the next round's {init}. Fewer than --min-workers successes end the
// run with an error; the last completed round stays as it was, and --resume starts again from it.
//
// --round-timeout T (asynchronous rounds, FedAsync/FedBuff): a round closes T seconds after it started with the
// workers that finished; the others keep running, sit out the rounds that start meanwhile, and their result joins
// the first round that closes after it came back, tau rounds old (the global model it started from is tau
// checkpoints behind that round's base). Such a round is merged by the staleness rule of `wavg merge --base
// --staleness` (next = base + (1/K) sum_k s(tau_k)(x_k - base), s from --staleness-fn); a round of fresh results
// only is their plain mean, as before. Late workers still running when the run ends are stopped.

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
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
#include "wavg/engine.hpp"
#include "wavg/error.hpp"
#include "wavg/federated.hpp"
#include "wavg/free_space.hpp"
#include "wavg/plan.hpp"
#include "wavg/provenance.hpp"
#include "wavg/signals.hpp"

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

// The process group of each running worker's command, by rank, so that stopping a worker stops what its shell
// started too, and so that wavg's SIGINT/SIGTERM/SIGHUP cleanup can stop them all (a fixed table: it is read in a
// signal handler). --workers is at most 4096.
constexpr std::size_t k_max_workers = 4096;
std::atomic<pid_t> g_worker_groups[k_max_workers];

void stop_worker_groups() noexcept {
  for (auto& group : g_worker_groups) {
    const pid_t pid = group.load();
    if (pid > 0) ::kill(-pid, SIGTERM);
  }
}

// Starts `cmd` for worker `rank` in a process group of its own, recorded before any signal can end wavg.
pid_t spawn(const std::string& cmd, std::size_t rank) {
  signals::DeferInterrupts defer;
  const pid_t pid = ::fork();
  if (pid < 0) fail("--train-cmd", std::string("cannot start a worker: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    // wavg's handlers (which remove wavg's temporary files) must not run here, and the signals DeferInterrupts
    // holds back in wavg are the command's own again.
    sigset_t held;
    sigemptyset(&held);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      ::signal(sig, SIG_DFL);
      sigaddset(&held, sig);
    }
    ::sigprocmask(SIG_UNBLOCK, &held, nullptr);
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before kill(-pid) whichever process runs first
  g_worker_groups[rank].store(pid);
  return pid;
}

std::string exit_text(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// One run of a worker's command: the round it was started in (from checkpoint round - 1) and where it writes.
struct Job {
  std::size_t rank = 0;
  std::size_t attempt = 0;
  std::uint64_t round = 0;
  std::string out;
};

// A worker's result to merge: its file and how many rounds the global model moved on since it started (tau).
struct Result {
  std::string path;
  std::uint64_t tau = 0;
};

using Clock = std::chrono::steady_clock;

// Every command this run started. A round starts every idle worker and closes when they are all done or, with
// --round-timeout, when the time is up; a worker still running then stays running, and its result joins the first
// round that closes after it came back. The destructor stops (SIGTERM) and reaps whatever is still running, so
// neither the end of the run nor an error leaves a worker behind.
class Workers {
 public:
  explicit Workers(const LocalSgdOptions& o) : m_o(o), m_busy(o.workers, false) {
    WAVG_ASSERT(o.workers <= k_max_workers);
    signals::add_cleanup(stop_worker_groups);
  }
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;
  ~Workers() { stop(); }

  // Stops (SIGTERM) and reaps every command still running: late workers whose round will not come.
  void stop() {
    for (const auto& [pid, job] : m_running) {
      std::fprintf(stderr, "wavg: warning: worker %zu (started in round %llu) is still running: stopped\n", job.rank,
                   static_cast<unsigned long long>(job.round));
      ::kill(-pid, SIGTERM);
    }
    for (const auto& [pid, job] : m_running) {
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      g_worker_groups[job.rank].store(0);
    }
    m_running.clear();
  }

  // Runs round `round` from `init`: the results of this round's workers (tau 0, in rank order) and of late ones.
  std::vector<Result> run_round(std::uint64_t round, const std::string& init, const std::vector<std::string>& outs) {
    for (std::size_t k = 0; k < m_o.workers; ++k)
      if (!m_busy[k]) m_queue.push_back({k, 0, round, outs[k]});
    std::vector<bool> ok(m_o.workers, false);
    const auto deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(m_o.round_timeout));
    // A round that could start no worker (all still busy) waits for a late one, or for the time to be up.
    const bool none_started = m_queue.empty();
    while (!m_queue.empty() || started_in(round) || (none_started && m_late.empty() && !m_running.empty())) {
      start_queued(init);
      int status = 0;
      const pid_t pid = wait_child(status, m_o.round_timeout > 0 ? &deadline : nullptr);
      if (pid == 0) break;  // the time is up
      finished(pid, status, round, ok);
    }
    // Workers that came back meanwhile join this round too (a blocking wait reaps one at a time).
    for (int status = 0;;) {
      const pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid <= 0) break;
      finished(pid, status, round, ok);
    }
    m_queue.clear();  // commands not started before the time was up: their workers sit this round out
    for (const auto& [pid, job] : m_running)
      if (job.round == round)
        std::fprintf(stderr,
                     "wavg: warning: round %llu: worker %zu still running after %g s; its result joins a "
                     "later round\n",
                     static_cast<unsigned long long>(round), job.rank, m_o.round_timeout);
    std::vector<Result> results;
    for (std::size_t k = 0; k < m_o.workers; ++k)
      if (ok[k]) results.push_back({outs[k], 0});
    for (const Job& late : m_late) results.push_back({late.out, round - late.round});
    m_late.clear();
    return results;
  }

  // Tells whether a command started in `round` is still running (its work directory must stay).
  bool started_in(std::uint64_t round) const {
    for (const auto& [pid, job] : m_running)
      if (job.round == round) return true;
    return false;
  }

 private:
  void start_queued(const std::string& init) {
    const std::size_t jobs = m_o.jobs ? m_o.jobs : m_o.workers;
    while (!m_queue.empty() && m_running.size() < jobs) {
      const Job job = m_queue.front();
      m_queue.pop_front();
      std::error_code ec;
      fs::remove(job.out, ec);
      const std::string cmd = fill(m_o.train_cmd, {{"{init}", shell_quote(init)},
                                                   {"{out}", shell_quote(job.out)},
                                                   {"{rank}", std::to_string(job.rank)},
                                                   {"{round}", std::to_string(job.round)},
                                                   {"{workers}", std::to_string(m_o.workers)},
                                                   {"{seed}", std::to_string(m_o.seed)}});
      if (m_o.verbose > 0)
        std::fprintf(stderr, "wavg: round %llu: worker %zu: %s\n", static_cast<unsigned long long>(job.round), job.rank,
                     cmd.c_str());
      m_running.emplace(spawn(cmd, job.rank), job);
      m_busy[job.rank] = true;
    }
  }

  // Waits for a child to end, until `deadline` when given: returns its pid, or 0 when the time is up.
  static pid_t wait_child(int& status, const Clock::time_point* deadline) {
    for (;;) {
      const pid_t pid = ::waitpid(-1, &status, deadline ? WNOHANG : 0);
      if (pid < 0 && errno != EINTR) fail("--train-cmd", std::string("waiting for workers: ") + std::strerror(errno));
      if (pid > 0) return pid;
      if (pid == 0) {
        if (Clock::now() >= *deadline) return 0;
        ::usleep(5000);  // polling keeps SIGCHLD free for whoever else owns it; 5 ms is nothing beside training
      }
    }
  }

  void finished(pid_t pid, int status, std::uint64_t round, std::vector<bool>& ok) {
    auto it = m_running.find(pid);
    if (it == m_running.end()) return;
    const Job job = it->second;
    m_running.erase(it);
    m_busy[job.rank] = false;
    g_worker_groups[job.rank].store(0);
    const bool wrote = fs::exists(job.out);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && wrote) {
      if (job.round == round)
        ok[job.rank] = true;
      else
        m_late.push_back(job);
      return;
    }
    const std::string why = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "wrote no output" : exit_text(status);
    const auto r = static_cast<unsigned long long>(job.round);
    if (job.round != round) {
      std::fprintf(stderr, "wavg: warning: round %llu: late worker %zu failed (%s); nothing to mix in\n", r, job.rank,
                   why.c_str());
    } else if (job.attempt < m_o.retries) {
      std::fprintf(stderr, "wavg: warning: round %llu: worker %zu failed (%s); retry %zu of %zu\n", r, job.rank,
                   why.c_str(), job.attempt + 1, m_o.retries);
      m_queue.push_back({job.rank, job.attempt + 1, job.round, job.out});
    } else {
      std::fprintf(stderr, "wavg: warning: round %llu: worker %zu failed (%s); left out of this round\n", r, job.rank,
                   why.c_str());
    }
  }

  const LocalSgdOptions& m_o;
  std::deque<Job> m_queue;
  std::map<pid_t, Job> m_running;
  std::vector<bool> m_busy;  // worker k's command is running (started in this round or an earlier one)
  std::vector<Job> m_late;   // results of earlier rounds' commands that came back, not merged yet
};

// The job of merging one round's results into `output`: a checkpoint of the run, replaced freely.
pipeline::Job round_job(std::vector<std::string> paths, const std::string& output, const LocalSgdOptions& o) {
  return {std::move(paths), pipeline::own_target(output, output_format(output, o.format)), "local-sgd"};
}

// FedAsync's rule over the job's base, as `wavg merge --base --staleness` applies it.
class StaleSteps final : public pipeline::Steps {
 public:
  explicit StaleSteps(FederatedOptions fed) : m_fed(std::move(fed)) {}
  std::unique_ptr<Method> method(Backend& backend, const pipeline::Run& run, const pipeline::Job&) override {
    return make_federated(backend, run.plan, m_fed, nullptr);
  }

 private:
  FederatedOptions m_fed;
};

// Merges a round with late results by FedAsync's rule, as `wavg merge --base --staleness` does: next = base +
// (1/K) sum_k s(tau_k) (x_k - base) over the K results, tau_k = 0 for this round's own.
void merge_stale(const std::vector<Result>& results, const std::string& base_path, const std::string& output,
                 const LocalSgdOptions& o) {
  std::vector<std::string> paths;
  FederatedOptions fed;
  fed.has_base = true;
  fed.staleness_fn = parse_staleness_fn(o.staleness_fn);
  for (const Result& r : results) {
    paths.push_back(r.path);
    fed.staleness.push_back(staleness_weight(*fed.staleness_fn, static_cast<double>(r.tau)));
  }
  validate_federated(fed, paths.size());
  StaleSteps steps(std::move(fed));
  pipeline::Job job = round_job(std::move(paths), output, o);
  job.base = base_path;
  pipeline::run(job, steps);
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
  Workers workers(o);
  auto work_dir = [&](std::uint64_t r) { return fs::path(o.out_dir) / ("round-" + std::to_string(r) + ".work"); };
  std::uint64_t first_work = state.round + 1;  // the oldest round whose work directory may still exist
  while (state.round < o.rounds) {
    const std::uint64_t round = state.round + 1;
    const std::string init = state.round == 0 ? o.init_file : dir.checkpoint(state.round);
    const fs::path work = work_dir(round);
    fs::create_directories(work);
    std::vector<std::string> outs;
    for (std::size_t k = 0; k < o.workers; ++k) outs.push_back((work / ("worker-" + std::to_string(k) + ext)).string());
    progress.show("round " + std::to_string(round) + "/" + std::to_string(o.rounds) + ": training", true);
    const std::vector<Result> results = workers.run_round(round, init, outs);
    if (results.size() < o.min_workers)
      fail(o.out_dir, "round " + std::to_string(round) + ": " + std::to_string(results.size()) + " of " +
                          std::to_string(o.workers) + " workers succeeded, fewer than --min-workers " +
                          std::to_string(o.min_workers) + "; round " + std::to_string(state.round) +
                          " is the last completed one (--resume continues from it)");
    std::vector<std::string> paths;
    bool stale = false;
    for (const Result& r : results) {
      paths.push_back(r.path);
      stale = stale || r.tau > 0;
    }
    // The merged checkpoint is about as large as a worker's: say so now if the disk cannot hold it.
    std::error_code size_ec;
    const std::uintmax_t size = fs::file_size(paths.front(), size_ec);
    if (!size_ec) check_free_space(dir.checkpoint(round), size);
    // A round of fresh results only is their plain mean, as without --round-timeout.
    if (stale)
      merge_stale(results, init, dir.checkpoint(round), o);
    else
      pipeline::run(round_job(paths, dir.checkpoint(round), o));
    // Work directories go once no command started in their round can still write there.
    for (std::uint64_t r = first_work; r <= round; ++r) {
      if (workers.started_in(r)) break;
      std::error_code ec;
      fs::remove_all(work_dir(r), ec);
      first_work = r + 1;
    }
    state.round = round;
    const double seconds =
        state.seconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    RunState done_state = state;
    done_state.seconds = seconds;
    dir.complete({round, round, NAN, NAN, NAN, seconds}, done_state);
  }
  workers.stop();
  for (std::uint64_t r = first_work; r <= state.round; ++r) {
    std::error_code ec;
    fs::remove_all(work_dir(r), ec);
  }
  if (state.round > 0) copy_atomically(dir.checkpoint(state.round), dir.final_path());
  RunSummary s;
  s.rounds = state.round;
  return s;
}

}  // namespace wavg::train
