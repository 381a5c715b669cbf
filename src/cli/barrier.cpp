// wavg barrier: test loss and accuracy along the straight line from A to B, and the barrier: the largest rise of the
// loss above the straight line between the end points' losses (Frankle et al. 2020; Ainsworth et al. 2023), and
// the largest fall of the accuracy below the line between the end points' accuracies.

#include <algorithm>
#include <cstdio>

#include "cli/common.hpp"
#include "cli/data_options.hpp"
#include "train/scoring.hpp"
#include "wavg/error.hpp"

namespace wavg::cli {

namespace {

struct BarrierOptions {
  std::string a, b;
  DataCli data;
  std::size_t steps = 11;
  Verbosity verbosity;
};

int run_barrier(const BarrierOptions& o) {
  if (o.steps < 2) fail_usage("--steps must be at least 2 (the two end points)");
  const train::Dataset test = train::load_test_split(o.data.data, o.data.label_col, o.data.test_fraction);
  const train::Mlp a = train::load_mlp(o.a, test), b = train::load_mlp(o.b, test);
  if (a.size() != b.size() || a.layers.size() != b.layers.size())
    throw Error(ExitCode::incompatible, o.b, "its layers differ from " + o.a + "'s");
  std::vector<double> t(o.steps);
  std::vector<train::Scores> s(o.steps);
  train::Workspace ws;
  for (std::size_t i = 0; i < o.steps; ++i) {
    t[i] = static_cast<double>(i) / static_cast<double>(o.steps - 1);
    s[i] = train::evaluate(train::interpolate(a, b, t[i]), test, ws);
  }
  double loss_barrier = 0, accuracy_barrier = 0;
  std::size_t at_loss = 0, at_accuracy = 0;
  std::printf("t\ttest loss\taccuracy\n");
  for (std::size_t i = 0; i < o.steps; ++i) {
    std::printf("%.4f\t%.6f\t%.6f\n", t[i], s[i].loss, s[i].accuracy);
    const double loss_line = (1 - t[i]) * s.front().loss + t[i] * s.back().loss;
    const double accuracy_line = (1 - t[i]) * s.front().accuracy + t[i] * s.back().accuracy;
    if (s[i].loss - loss_line > loss_barrier) loss_barrier = s[i].loss - loss_line, at_loss = i;
    if (accuracy_line - s[i].accuracy > accuracy_barrier)
      accuracy_barrier = accuracy_line - s[i].accuracy, at_accuracy = i;
  }
  std::printf("barrier: loss %.6f (t = %.4f), accuracy %.6f (t = %.4f)\n", loss_barrier, t[at_loss], accuracy_barrier,
              t[at_accuracy]);
  return 0;
}

}  // namespace

RunFn setup_barrier(CLI::App& app) {
  auto o = std::make_shared<BarrierOptions>();
  app.add_option("a", o->a, "Checkpoint of wavg's built-in MLP at t = 0")->required();
  app.add_option("b", o->b, "Checkpoint at t = 1 (align it to A first to see what alignment changes)")->required();
  add_data_options(app, o->data);
  app.add_option("--steps", o->steps, "Points on the line, end points included")->default_str("11");
  add_verbosity(app, o->verbosity);
  return [o] { return run_barrier(*o); };
}

}  // namespace wavg::cli
