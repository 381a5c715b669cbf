// wavg eval: the test loss and accuracy of a built-in MLP checkpoint, on local-sgd's held-out split.

#include <cstdio>

#include "cli/common.hpp"
#include "cli/data_options.hpp"
#include "train/scoring.hpp"

namespace wavg::cli {

namespace {

struct EvalOptions {
  std::string model;
  DataCli data;
  Verbosity verbosity;
};

int run_eval(const EvalOptions& o) {
  const train::Dataset test = train::load_test_split(o.data.data, o.data.label_col, o.data.test_fraction);
  const train::Mlp model = train::load_mlp(o.model, test);
  train::Workspace ws;
  const train::Scores s = train::evaluate(model, test, ws);
  std::printf("%s: test loss %.6f, accuracy %.6f (%zu rows)\n", o.model.c_str(), s.loss, s.accuracy, test.rows());
  return 0;
}

}  // namespace

RunFn setup_eval(CLI::App& app) {
  auto o = std::make_shared<EvalOptions>();
  app.add_option("model", o->model, "Checkpoint of wavg's built-in MLP (local-sgd's output, or a merge of them)")
      ->required();
  add_data_options(app, o->data);
  add_verbosity(app, o->verbosity);
  return [o] { return run_eval(*o); };
}

}  // namespace wavg::cli
