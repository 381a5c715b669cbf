#pragma once
// What `wavg local-sgd` is asked to do, for the built-in trainer, external training commands and MPI alike.

#include <cstdint>
#include <string>
#include <vector>

#include "train/dataset.hpp"

namespace wavg::train {

// local: every worker trains `period` steps, then the models are averaged. sync: the reference, synchronous
// data-parallel SGD that averages the workers' gradients after every step.
enum class Mode { local, sync };
// shared: every worker starts from the same initial weights; independent: worker k draws its own.
enum class InitMode { shared, independent };
enum class Transport { local, mpi };

struct LocalSgdOptions {
  // The built-in trainer.
  std::string data;
  int label_col = -1;
  double test_fraction = 0.2;
  std::vector<std::size_t> hidden{64, 32};
  double lr = 0.1;
  std::size_t batch = 32;  // 0: the whole shard (FedSGD)
  double momentum = 0;
  Shard shard = Shard::iid;
  InitMode init_mode = InitMode::shared;
  Mode mode = Mode::local;

  // Rounds.
  std::size_t workers = 4;
  std::uint64_t period = 8;
  // Hierarchical local SGD (PyTorch's HierarchicalModelAverager): with group_size G > 0, workers average within
  // groups of G consecutive workers every `period` steps and across all workers every `group_period` steps, so a
  // round is group_period / period local phases, the last ending in the global average.
  std::size_t group_size = 0;
  std::uint64_t group_period = 0;
  std::uint64_t local_epochs = 0;  // >0: period = epochs * batches per shard
  std::uint64_t rounds = 50;
  std::uint64_t warmup_steps = 0;
  std::uint64_t seed = 1;
  double target_accuracy = 0;  // >0: stop after the first round whose test accuracy reaches it

  // External trainers.
  std::string train_cmd;
  std::string init_file;
  std::size_t jobs = 0;  // 0: as many as workers
  std::size_t retries = 1;
  std::size_t min_workers = 1;
  // > 0: a round closes this many seconds after it started with the workers that finished; a late worker's result
  // is mixed into the first round that closes after it arrives, weighted by its staleness (FedAsync's rule).
  double round_timeout = 0;
  std::string staleness_fn = "polynomial:a=0.5";

  // Output.
  std::string out_dir;
  std::string format = "hdf5";
  bool resume = false;
  bool force = false;
  Transport transport = Transport::local;
  bool quiet = false;
  int verbose = 0;
};

}  // namespace wavg::train
