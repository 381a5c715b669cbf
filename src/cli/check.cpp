// wavg check: the validation merge does (names, shapes, dtypes, --int-policy), without writing anything.

#include <cstdio>

#include "cli/common.hpp"
#include "wavg/engine.hpp"
#include "wavg/error.hpp"

namespace wavg::cli {

namespace {

struct CheckOptions {
  std::vector<std::string> inputs;
  PlanOptions plan;
  Verbosity verbosity;
};

int run_check(const CheckOptions& o) {
  if (o.inputs.size() < 2) fail_usage("check needs at least two inputs");
  const auto readers = pipeline::open_inputs(o.inputs);
  const std::vector<Reader*> inputs = pipeline::raw(readers);
  const Plan plan = build_plan(inputs, pipeline::engine_plan_options(o.plan));
  report_excluded(plan, o.verbosity);
  auto backend = make_cpu_backend();
  auto method = make_weighted_mean(*backend, {});
  Engine(plan, inputs, *method, *backend).verify();
  for (const std::string& line : plan.pairing) note(o.verbosity, 1, line);
  for (const auto& w : plan.warnings) note(o.verbosity, 0, "warning: " + w);
  if (!plan.dropped.empty())
    note(o.verbosity, 0, std::to_string(plan.dropped.size()) + " tensor(s) missing from some inputs would be dropped");
  if (!o.verbosity.quiet)
    std::printf("ok: %zu inputs match: %zu tensors (%zu to average, %zu other)\n", inputs.size(), plan.entries.size(),
                plan.count(Action::average), plan.entries.size() - plan.count(Action::average));
  return 0;
}

}  // namespace

RunFn setup_check(CLI::App& app) {
  auto o = std::make_shared<CheckOptions>();
  app.add_option("inputs", o->inputs, "Checkpoints to compare with the first one")->required();
  add_plan_options(app, o->plan);
  add_verbosity(app, o->verbosity);
  return [o] { return run_check(*o); };
}

}  // namespace wavg::cli
