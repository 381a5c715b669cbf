// The driver for the built-in trainer. Round r starts at global step s from the global model; each worker k trains
// H steps (H = 1 while s < --warmup-steps, as in post-local SGD, else --period) on its own shard, and the average
// of the workers' models becomes the next global model. Optimizer state (momentum) lives until the next average,
// like a FedAvg client's, so a round needs nothing but the global model and the step counter: resuming is exact.
// Hierarchical local SGD (--group-size G, --group-period P) keeps that shape: a round after the warm-up is P / H
// phases of H steps, each but the last ending in an average within every group of G consecutive workers, the last
// in the average over all of them. A round still starts and ends at one global model, so checkpoints, the log and
// --resume stay as they are; the step counter moves by P.
//
// Every random choice is a pure function of (seed, worker, step): the minibatch of worker k at step t is slice
// t mod b of a permutation drawn for epoch t / b of its shard (b batches per epoch). Workers are trained in
// parallel, one per thread, each with the same arithmetic in the same order, so the result is bit-identical for
// any thread count and for any split of workers across MPI ranks.

#include "train/driver.hpp"

#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "train/model_io.hpp"
#include "train/run_dir.hpp"
#include "wavg/error.hpp"
#include "wavg/free_space.hpp"

namespace wavg::train {

namespace {

class LocalAverager final : public Averager {
 public:
  std::vector<std::size_t> local_workers(std::size_t workers) const override {
    std::vector<std::size_t> all(workers);
    for (std::size_t k = 0; k < workers; ++k) all[k] = k;
    return all;
  }
  bool is_root() const override { return true; }
  void average(const std::vector<Mlp*>& local, Mlp& global) override { average_models(local, {}, global); }
  void average_groups(const std::vector<Mlp*>& local, std::size_t group_size) override {
    Mlp mean;
    for (std::size_t first = 0; first < local.size(); first += group_size) {
      const auto begin = local.begin() + static_cast<std::ptrdiff_t>(first);
      const std::vector<Mlp*> group(begin, begin + static_cast<std::ptrdiff_t>(group_size));
      mean = *group.front();
      average_models(group, {}, mean);
      for (Mlp* m : group) *m = mean;
    }
  }
};

// Chooses worker k's minibatch at step t, caching the permutation of the current epoch.
class Batches {
 public:
  Batches(std::size_t rows, std::size_t batch, std::uint64_t seed, std::size_t worker)
      : m_rows(rows), m_batch(batch == 0 || batch > rows ? rows : batch), m_seed(seed), m_worker(worker) {}

  std::size_t per_epoch() const { return (m_rows + m_batch - 1) / m_batch; }

  const std::vector<std::size_t>& at(std::uint64_t step) {
    const std::uint64_t epoch = step / per_epoch(), slice = step % per_epoch();
    if (epoch != m_epoch || m_perm.empty()) {
      m_perm = permutation(m_rows, hash_key(m_seed, 0xba7c, m_worker, epoch));
      m_epoch = epoch;
    }
    const std::size_t begin = slice * m_batch, end = std::min(m_rows, begin + m_batch);
    m_rows_out.assign(m_perm.begin() + static_cast<std::ptrdiff_t>(begin),
                      m_perm.begin() + static_cast<std::ptrdiff_t>(end));
    return m_rows_out;
  }

 private:
  std::size_t m_rows, m_batch;
  std::uint64_t m_seed;
  std::size_t m_worker;
  std::uint64_t m_epoch = 0;
  std::vector<std::size_t> m_perm, m_rows_out;
};

// One worker's model, optimizer state and scratch space.
struct Worker {
  Mlp model, grad, velocity;
  Workspace ws;
};

void sgd_update(Mlp& model, const Mlp& grad, Mlp& velocity, double lr, double momentum) {
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    Layer& w = model.layers[i];
    const Layer& g = grad.layers[i];
    if (momentum == 0) {
      w.kernel -= lr * g.kernel;
      w.bias -= lr * g.bias;
    } else {
      Layer& v = velocity.layers[i];
      v.kernel = momentum * v.kernel + g.kernel;
      v.bias = momentum * v.bias + g.bias;
      w.kernel -= lr * v.kernel;
      w.bias -= lr * v.bias;
    }
  }
}

void zero(Mlp& m) {
  for (Layer& l : m.layers) {
    l.kernel.setZero();
    l.bias.setZero();
  }
}

nlohmann::json settings_of(const LocalSgdOptions& o) {
  // A flat run records null groups, which is also what a state.json from before hierarchical runs reads as.
  auto or_null = [&](std::uint64_t v) { return o.group_size > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"data", o.data},
          {"hidden", o.hidden},
          {"workers", o.workers},
          {"seed", o.seed},
          {"shard", o.shard == Shard::iid ? "iid" : "label-sorted"},
          {"mode", o.mode == Mode::local ? "local" : "sync"},
          {"batch", o.batch},
          {"group_size", or_null(o.group_size)},
          {"group_period", or_null(o.group_period)}};
}

std::string percent(double v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100 * v);
  return buf;
}

}  // namespace

std::unique_ptr<Averager> make_local_averager() { return std::make_unique<LocalAverager>(); }

RunSummary run_builtin(const LocalSgdOptions& o, Averager& averager) {
  const auto started = std::chrono::steady_clock::now();
  Dataset all = load_csv(o.data, o.label_col), train, test;
  split_train_test(all, o.test_fraction, train, test);
  scale_features(train, test);
  const std::vector<Dataset> shards = make_shards(train, o.workers, o.shard, o.seed);

  std::unique_ptr<RunDir> dir;
  if (averager.is_root()) dir = std::make_unique<RunDir>(o, settings_of(o));
  RunState state;
  Mlp global(train.features, o.hidden, train.classes);
  if (o.resume) state = dir ? dir->state() : RunDir::read_state(o.out_dir);  // every rank reads the same files
  if (state.round > 0)
    load_model(global, RunDir::checkpoint_in(o.out_dir, o.format, state.round));
  else
    global.init_glorot(hash_key(o.seed, 0x1417));

  const std::vector<std::size_t> mine = averager.local_workers(o.workers);
  std::vector<Worker> workers(mine.size());
  std::vector<Batches> batches;
  for (std::size_t j = 0; j < mine.size(); ++j) {
    for (Mlp* m : {&workers[j].model, &workers[j].grad, &workers[j].velocity}) *m = global;
    batches.emplace_back(shards[mine[j]].rows(), o.batch, o.seed, mine[j]);
  }
  const std::uint64_t period = o.local_epochs > 0 ? o.local_epochs * batches.front().per_epoch() : o.period;
  Worker sync;  // the reference mode's summed gradient and optimizer state
  sync.grad = sync.velocity = global;

  Progress progress(!o.quiet && averager.is_root());
  Workspace eval_ws;
  RunSummary summary;
  const int n_local = static_cast<int>(mine.size());
  while (state.round < o.rounds) {
    const std::uint64_t h = state.step < o.warmup_steps ? 1 : period;
    // Hierarchical: the round is `phases` local phases of h steps; all but the last end in a group average.
    const std::uint64_t phases = o.group_size > 0 && state.step >= o.warmup_steps ? o.group_period / period : 1;
    if (o.mode == Mode::local) {
      std::vector<Mlp*> local;
      for (Worker& w : workers) local.push_back(&w.model);
      for (std::uint64_t phase = 0; phase < phases; ++phase) {
        const std::uint64_t first_step = state.step + phase * h;
#pragma omp parallel for schedule(static, 1)
        for (int j = 0; j < n_local; ++j) {
          Worker& w = workers[static_cast<std::size_t>(j)];
          const std::size_t k = mine[static_cast<std::size_t>(j)];
          if (phase == 0) {
            w.model = global;
            if (state.round == 0 && o.init_mode == InitMode::independent)
              w.model.init_glorot(hash_key(o.seed, 0x1417, k + 1));
          }
          zero(w.velocity);
          for (std::uint64_t t = 0; t < h; ++t) {
            gradient(w.model, shards[k], batches[static_cast<std::size_t>(j)].at(first_step + t), w.grad, w.ws);
            sgd_update(w.model, w.grad, w.velocity, o.lr, o.momentum);
          }
        }
        if (phase + 1 < phases) averager.average_groups(local, o.group_size);
      }
      averager.average(local, global);
    } else {
      if (mine.size() != o.workers) fail_usage("--mode sync runs in one process (no --backend mpi)");
      zero(sync.velocity);
      for (std::uint64_t t = 0; t < h; ++t) {
#pragma omp parallel for schedule(static, 1)
        for (int j = 0; j < n_local; ++j) {
          Worker& w = workers[static_cast<std::size_t>(j)];
          gradient(global, shards[static_cast<std::size_t>(j)], batches[static_cast<std::size_t>(j)].at(state.step + t),
                   w.grad, w.ws);
        }
        // The reference: the gradients summed in worker order and divided once, then one SGD step.
        for (std::size_t i = 0; i < global.layers.size(); ++i) {
          sync.grad.layers[i] = workers[0].grad.layers[i];
          for (std::size_t j = 1; j < workers.size(); ++j) {
            sync.grad.layers[i].kernel += workers[j].grad.layers[i].kernel;
            sync.grad.layers[i].bias += workers[j].grad.layers[i].bias;
          }
          sync.grad.layers[i].kernel /= static_cast<double>(workers.size());
          sync.grad.layers[i].bias /= static_cast<double>(workers.size());
        }
        sgd_update(global, sync.grad, sync.velocity, o.lr, o.momentum);
      }
    }
    state.round += 1;
    state.step += h * phases;

    // Every rank holds the same global model, so every rank scores it and stops at the same round.
    const Scores tr = evaluate(global, train, eval_ws), te = evaluate(global, test, eval_ws);
    const double seconds =
        state.seconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (dir) {
      check_free_space(dir->checkpoint(state.round), 8 * global.size());  // float64 parameters at least
      save_model(global, dir->checkpoint(state.round), o.format);
      RunState done = state;
      done.seconds = seconds;
      dir->complete({state.round, state.step, tr.loss, te.loss, te.accuracy, seconds}, done);
    }
    progress.show("round " + std::to_string(state.round) + "/" + std::to_string(o.rounds) + "  step " +
                  std::to_string(state.step) + "  test accuracy " + percent(te.accuracy));
    summary.test_accuracy = te.accuracy;
    if (o.target_accuracy > 0 && te.accuracy >= o.target_accuracy) {
      summary.target_round = state.round;
      break;
    }
  }
  if (dir) save_model(global, dir->final_path(), o.format);
  summary.rounds = state.round;
  summary.steps = state.step;
  return summary;
}

}  // namespace wavg::train
