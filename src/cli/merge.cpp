// wavg merge: open inputs, build the plan, run the engine, commit the output.

#include <cstdio>

#include "cli/common.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/engine.hpp"
#include "wavg/error.hpp"
#include "wavg/provenance.hpp"

namespace wavg::cli {

namespace {

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::string weights;
  std::string format;
  std::string out_dtype;
  PlanOptions plan;
  bool force = false;
  int threads = 0;
  Verbosity verbosity;
};

void report(const MergeOptions& o, const Plan& plan, const Method& method, const std::vector<Reader*>& inputs) {
  for (const PlanEntry& e : plan.entries)
    if (e.action != Action::average)
      note(o.verbosity, 1,
           "not averaged: " + e.info.name + " (" + std::string(dtype_name(e.info.dtype)) + ", " +
               (e.action == Action::check_equal ? "identical in every input" : "copied from input 1") + ")");
  for (const auto& w : plan.warnings) note(o.verbosity, 0, "warning: " + w);
  if (!plan.dropped.empty()) {
    note(o.verbosity, 0,
         "dropped " + std::to_string(plan.dropped.size()) + " tensor(s) missing from some inputs (--tensors intersection)");
    for (const auto& name : plan.dropped) note(o.verbosity, 1, "dropped: " + name);
  }
  if (o.verbosity.quiet) return;
  const std::size_t averaged = plan.count(Action::average);
  const std::size_t other = plan.entries.size() - averaged;
  std::printf("merged %zu inputs (%s) into %s: %zu tensors averaged (%llu values, %s), %zu copied\n", inputs.size(),
              inputs.front()->layout().c_str(), o.output.c_str(), averaged,
              static_cast<unsigned long long>(plan.values(Action::average)), method.describe().c_str(), other);
}

int run_merge(const MergeOptions& o) {
  if (o.inputs.size() < 2) fail_usage("merge needs at least two inputs");
  const std::vector<double> weights = parse_weights(o.weights);
  validate_weights(weights, o.inputs.size());
  const std::string format = output_format(o.output, o.format);
  check_output_not_input(o.output, o.inputs);
  const Overwrite overwrite = o.force ? Overwrite::yes : Overwrite::no;
  if (overwrite == Overwrite::no && std::filesystem::exists(o.output))
    throw Error(ExitCode::usage, o.output, "already exists (use --force to replace it)");
  apply_threads(o.threads);

  const auto readers = open_inputs(o.inputs);
  const std::vector<Reader*> inputs = raw(readers);
  Plan plan = build_plan(inputs, o.plan);
  if (!o.out_dtype.empty()) set_out_dtype(plan, *dtype_from_name(o.out_dtype));
  auto backend = make_cpu_backend();
  auto method = make_weighted_mean(*backend, weights);
  Engine engine(plan, inputs, *method, *backend);
  engine.verify();

  AtomicFile out(o.output, overwrite);
  const OutputSpec spec{output_tensors(plan), inputs.front(), plan.dropped_from_first,
                        make_provenance("merge", method->describe(), o.inputs, o.out_dtype)};
  {
    auto writer = create_writer(format, out.tmp_path(), o.output, spec);
    engine.run(*writer);
  }
  out.commit();
  report(o, plan, *method, inputs);
  return 0;
}

}  // namespace

RunFn setup_merge(CLI::App& app) {
  auto o = std::make_shared<MergeOptions>();
  app.add_option("inputs", o->inputs, "Checkpoints to merge (two or more)")->required();
  app.add_option("-o,--output", o->output, "Output checkpoint")->required();
  app.add_option("-w,--weights", o->weights, "Comma-separated weights, one per input, normalised by their sum");
  app.add_option("--format", o->format, "Output format (default: from the output's extension)");
  add_out_dtype(app, o->out_dtype);
  app.add_flag("-f,--force", o->force, "Replace an existing output");
  add_plan_options(app, o->plan);
  add_threads(app, o->threads);
  add_verbosity(app, o->verbosity);
  return [o] { return run_merge(*o); };
}

}  // namespace wavg::cli
