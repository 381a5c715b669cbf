#pragma once
// The local-SGD driver: rounds of `period` local steps per worker, each ending in an average of the workers'
// models through wavg's merge engine.

#include <memory>
#include <vector>

#include "train/mlp.hpp"
#include "train/options.hpp"

namespace wavg::train {

// Where the workers of this process live and how their models become one. The in-process averager holds every
// worker; the MPI one holds the rank's own and averages across ranks.
class Averager {
 public:
  virtual ~Averager() = default;
  // Returns the indices of the workers this process trains.
  virtual std::vector<std::size_t> local_workers(std::size_t workers) const = 0;
  // Tells whether this process writes checkpoints and logs.
  virtual bool is_root() const = 0;
  // Replaces `global` by the average over all workers of the models in `local` (this process's workers).
  virtual void average(const std::vector<Mlp*>& local, Mlp& global) = 0;
  // Replaces each model in `local` by the average over its group: workers k and j are in one group when
  // k / group_size == j / group_size (group_size divides the number of workers).
  virtual void average_groups(const std::vector<Mlp*>& local, std::size_t group_size) = 0;
};

std::unique_ptr<Averager> make_local_averager();

// What the driver reports at the end.
struct RunSummary {
  std::uint64_t rounds = 0, steps = 0;
  double test_accuracy = 0;
  std::uint64_t target_round = 0;  // first round that reached --target-accuracy, 0 if none
};

// Trains an MLP on `o.data` with the built-in trainer.
RunSummary run_builtin(const LocalSgdOptions& o, Averager& averager);
// Runs `o.train_cmd` for every worker, every round (external.cpp).
RunSummary run_external(const LocalSgdOptions& o);

}  // namespace wavg::train
