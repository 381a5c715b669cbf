#pragma once
// The options of merge's task-vector methods (--lambda, --density, --t; --method, --base, --weights and --seed are
// shared with the federated options), kept apart from merge.cpp so that file still reads as the merge's table of
// contents.

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "wavg/task_methods.hpp"

namespace wavg::cli {

struct TaskCli {
  ParamValues params;  // --lambda, --density, ...: the rows' numeric parameters, by key
  std::optional<DareRescale> rescale;
  std::optional<bool> normalize;
  std::shared_ptr<const TensorValues> values;  // merge --recipe's per-tensor values
  bool linear = false;                         // merge --recipe's linear

  // Returns the task options from these, the federated ones (--method, --base, --seed) and the input weights.
  TaskOptions resolve(const FederatedOptions& fed, std::vector<double> weights) const;
};

// Adds the rows' numeric parameters (--lambda, --density, ...), --rescale and --normalize under their own heading.
void add_task_options(CLI::App& app, TaskCli& t);

}  // namespace wavg::cli
