// wavg local-sgd: train K replicas, average them every H steps (built-in MLP trainer, external commands, or MPI).

#include <cstdio>
#include <map>

#include "cli/common.hpp"
#include "cli/run_plot.hpp"
#include "pipeline/pipeline.hpp"
#include "train/driver.hpp"
#include "train/mpi.hpp"
#include "wavg/error.hpp"
#include "wavg/federated.hpp"

namespace wavg::cli {

namespace {

using namespace wavg::train;

struct LocalSgdCli {
  LocalSgdOptions o;
  std::string hidden = "64,32";
  int threads = 0;
  Reduction reduction = Reduction::reduce_scatter;
  std::string stats, plot;
  std::vector<std::string> runs;  // run folders to show, without training
  bool json = false;
  CLI::Option* algorithm = nullptr;
  CLI::Option* round_timeout = nullptr;
  CLI::Option* staleness_fn = nullptr;
  Verbosity verbosity;
};

std::vector<std::size_t> parse_widths(const std::string& text) {
  std::vector<std::size_t> out;
  for (double v : parse_numbers("--hidden", text)) {
    if (v < 1 || v > 1e6 || v != static_cast<double>(static_cast<std::size_t>(v)))
      fail_usage("--hidden: '" + text + "' is not a comma-separated list of layer widths");
    out.push_back(static_cast<std::size_t>(v));
  }
  return out;
}

// Hierarchical local SGD: G consecutive workers per group (G divides K, as PyTorch's subgroups require) and a
// global period that is a whole number of local phases.
void check_groups(const LocalSgdCli& c) {
  const LocalSgdOptions& o = c.o;
  if ((o.group_size == 0) != (o.group_period == 0)) fail_usage("give --group-size and --group-period together");
  if (o.group_size == 0) return;
  if (!o.train_cmd.empty() || o.mode != Mode::local)
    fail_usage("--group-size averages the built-in trainer's workers in --mode local");
  if (o.local_epochs > 0) fail_usage("--group-period counts steps: give --period, not --local-epochs");
  if (o.workers % o.group_size != 0 || o.group_size == o.workers)
    fail_usage("--group-size " + std::to_string(o.group_size) + " must divide --workers " + std::to_string(o.workers) +
               " into two or more groups");
  if (o.group_period % o.period != 0 || o.group_period == o.period)
    fail_usage("--group-period " + std::to_string(o.group_period) + " must be a multiple of --period " +
               std::to_string(o.period) + " larger than it");
}

void check(const LocalSgdCli& c) {
  const LocalSgdOptions& o = c.o;
  if (o.out_dir.empty()) fail_usage("give --out-dir, or run folders to show with --plot or --json");
  if (!o.train_cmd.empty() && (!c.plot.empty() || c.json))
    fail_usage("--plot and --json show the test scores of the built-in trainer; a --train-cmd run has none");
  if (o.train_cmd.empty() == o.data.empty()) fail_usage("give either --data (built-in trainer) or --train-cmd");
  if (!o.train_cmd.empty() && o.init_file.empty()) fail_usage("--train-cmd needs --init, the initial checkpoint");
  if (!o.train_cmd.empty() && o.transport == Transport::mpi) fail_usage("--train-cmd runs on one machine");
  if (!c.stats.empty() && o.transport != Transport::mpi)
    fail_usage("--stats counts MPI traffic: it needs --backend mpi");
  if (c.algorithm && c.algorithm->count() > 0 && o.transport != Transport::mpi)
    fail_usage("--algorithm is how MPI ranks exchange weights: it needs --backend mpi");
  if (!c.stats.empty()) pipeline::check_output(c.stats, {}, o.force ? Overwrite::yes : Overwrite::no);
  if (o.min_workers > o.workers) fail_usage("--min-workers is larger than --workers");
  if (o.min_workers == 0) fail_usage("--min-workers must be at least 1 (a round merges something)");
  if (o.period == 0) fail_usage("--period must be at least 1");
  check_groups(c);
  if (c.staleness_fn->count() > 0 && c.round_timeout->count() == 0)
    fail_usage("--staleness-fn weights late workers' results: it needs --round-timeout");
  if (c.round_timeout->count() > 0) {
    if (o.train_cmd.empty()) fail_usage("--round-timeout closes rounds of --train-cmd workers");
    if (!(o.round_timeout > 0 && o.round_timeout <= 1e9)) fail_usage("--round-timeout must be a positive number");
    parse_staleness_fn(o.staleness_fn);  // refuses a malformed function before any work
  }
  if (!(o.lr > 0)) fail_usage("--lr must be positive");
  if (!(o.momentum >= 0 && o.momentum < 1)) fail_usage("--momentum must be in [0, 1)");
  if (!(o.test_fraction >= 0 && o.test_fraction < 1)) fail_usage("--test-fraction must be in [0, 1)");
}

// Shows the runs in `dirs` as --plot and --json ask.
void show_runs(const LocalSgdCli& c, const std::vector<std::string>& dirs) {
  std::vector<RunLog> runs;
  for (const std::string& dir : dirs) runs.push_back(read_run_log(dir));
  if (c.json) print_runs_json(runs);
  if (!c.plot.empty()) plot_runs(runs, c.plot, c.o.force ? Overwrite::yes : Overwrite::no);
}

int run_local_sgd(LocalSgdCli& c) {
  LocalSgdOptions& o = c.o;
  if (!c.plot.empty()) pipeline::check_output(c.plot, {}, o.force ? Overwrite::yes : Overwrite::no);
  if (!c.runs.empty()) {
    if (!o.out_dir.empty() || !o.data.empty() || !o.train_cmd.empty())
      fail_usage("run folders are shown, not trained: give them without --out-dir, --data or --train-cmd");
    if (c.plot.empty() && !c.json) fail_usage("run folders are shown with --plot FILE.svg or --json");
    show_runs(c, c.runs);
    return 0;
  }
  o.hidden = parse_widths(c.hidden);
  o.quiet = c.verbosity.quiet;
  o.verbose = c.verbosity.verbose;
  check(c);
  output_format("", o.format);  // refuses an unknown --format before any work
  apply_threads(c.threads);
  if (!o.train_cmd.empty()) {
    const RunSummary s = run_external(o);
    if (!o.quiet)
      std::printf("%llu rounds of %zu workers in %s\n", static_cast<unsigned long long>(s.rounds), o.workers,
                  o.out_dir.c_str());
    return 0;
  }
  auto report = [&](const RunSummary& s) {
    if (!c.plot.empty() || c.json) show_runs(c, {o.out_dir});
    if (o.quiet || c.json) return;
    std::printf("%llu rounds, %llu steps: test accuracy %.4f", static_cast<unsigned long long>(s.rounds),
                static_cast<unsigned long long>(s.steps), s.test_accuracy);
    if (o.target_accuracy > 0) {
      if (s.target_round)
        std::printf(", reached %.4f in round %llu", o.target_accuracy, static_cast<unsigned long long>(s.target_round));
      else
        std::printf(", did not reach %.4f", o.target_accuracy);
    }
    std::printf("\n");
  };
  if (o.transport == Transport::mpi) {
    return with_mpi([&] {
      auto averager = make_mpi_averager(c.reduction);
      const RunSummary s = run_builtin(o, *averager);
      if (!c.stats.empty()) write_averager_stats(*averager, c.stats, o.force ? Overwrite::yes : Overwrite::no);
      if (averager->is_root()) report(s);
      return 0;
    });
  }
  auto averager = make_local_averager();
  report(run_builtin(o, *averager));
  return 0;
}

}  // namespace

RunFn setup_local_sgd(CLI::App& app) {
  auto c = std::make_shared<LocalSgdCli>();
  LocalSgdOptions& o = c->o;
  app.add_option("runs", c->runs, "Run folders to show with --plot or --json, instead of training")
      ->type_name("RUN-DIR");
  app.add_option("--out-dir", o.out_dir, "Directory for round-NNNN checkpoints, final, log.csv and state.json");
  app.add_option("--data", o.data, "Built-in trainer: CSV or CSV.gz of features and an integer label per row");
  app.add_option("--label-col", o.label_col, "Column of the label, from 0 (default: the last)");
  app.add_option("--test-fraction", o.test_fraction, "Rows held out for the test set")->default_str("0.2");
  app.add_option("--hidden", c->hidden, "Hidden layer widths of the MLP")->default_str("64,32");
  app.add_option("--workers", o.workers, "Number of workers K")->check(CLI::Range(1, 4096))->default_str("4");
  app.add_option("--period", o.period, "Local steps H between averages")->default_str("8");
  app.add_option("--group-size", o.group_size, "Hierarchical: also average within groups of G consecutive workers")
      ->type_name("G")
      ->check(CLI::Range(1, 4096));
  app.add_option("--group-period", o.group_period, "Hierarchical: steps P between averages over all workers")
      ->type_name("P");
  app.add_option("--local-epochs", o.local_epochs, "Local steps per round as passes over a shard (overrides --period)");
  app.add_option("--rounds", o.rounds, "Rounds R to run in all (counting those before a --resume)")->default_str("50");
  app.add_option("--lr", o.lr, "Learning rate")->default_str("0.1");
  app.add_option("--batch", o.batch, "Local minibatch size; 0 means the whole shard")->default_str("32");
  app.add_option("--momentum", o.momentum, "Momentum (reset every round)")->default_str("0");
  app.add_option("--seed", o.seed, "Seed for initialisation, shards and minibatches")->default_str("1");
  app.add_option("--warmup-steps", o.warmup_steps, "Average after every step for the first steps")->default_str("0");
  add_choice(app, "--shard", o.shard, {{"iid", Shard::iid}, {"label-sorted", Shard::label_sorted}},
             "How the training rows are divided");
  add_choice(app, "--init-mode", o.init_mode, {{"shared", InitMode::shared}, {"independent", InitMode::independent}},
             "Workers start from shared or independent initial weights");
  add_choice(app, "--mode", o.mode, {{"local", Mode::local}, {"sync", Mode::sync}},
             "local (average models) or sync (average gradients every step)");
  app.add_option("--target-accuracy", o.target_accuracy, "Stop after the first round reaching this test accuracy");
  app.add_option("--train-cmd", o.train_cmd, "External trainer command with {init} {out} {rank} {round}");
  app.add_option("--init", o.init_file, "Initial checkpoint for --train-cmd");
  app.add_option("--jobs", o.jobs, "Commands run at once (default: --workers)");
  app.add_option("--retries", o.retries, "Retries of a failing worker before it is left out")->default_str("1");
  app.add_option("--min-workers", o.min_workers, "Fewest successful workers for a round")->default_str("1");
  c->round_timeout = app.add_option("--round-timeout", o.round_timeout,
                                    "Close a round after this long; a late worker's result joins a later round")
                         ->type_name("SECONDS");
  c->staleness_fn = app.add_option("--staleness-fn", o.staleness_fn,
                                   "s(tau) for late results: constant, polynomial:a=A or hinge:a=A,b=B")
                        ->default_str("polynomial:a=0.5");
  app.add_option("--format", o.format, "Checkpoint format")->default_str("hdf5");
  add_choice(app, "--backend", o.transport, {{"local", Transport::local}, {"mpi", Transport::mpi}},
             "local (one process) or mpi (one worker per rank, under mpirun)");
  c->algorithm = add_reduction_options(app, c->reduction, c->stats);
  app.add_option("--plot", c->plot, "Also draw the test loss and accuracy per step as an SVG picture")
      ->type_name("FILE.svg");
  app.add_flag("--json", c->json, "Print the test loss and accuracy of every round as JSON");
  app.add_flag("--resume", o.resume, "Continue the run in --out-dir from its last completed round");
  app.add_flag("-f,--force", o.force, "Start a new run in an --out-dir that holds one; replace a --plot file");
  add_threads(app, c->threads);
  add_verbosity(app, c->verbosity);
  return [c] { return run_local_sgd(*c); };
}

}  // namespace wavg::cli
