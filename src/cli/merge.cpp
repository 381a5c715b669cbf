// wavg merge: open inputs, build the plan, run the engine, commit the output.

#include <cstdio>

#include "cli/common.hpp"
#include "cli/federated_options.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/engine.hpp"
#include "wavg/error.hpp"
#include "wavg/free_space.hpp"
#include "wavg/federated.hpp"
#include "wavg/provenance.hpp"

namespace wavg::cli {

namespace {

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::string weights;
  std::string format;
  std::string out_dtype;
  std::string device = "auto";
  PlanOptions plan;
  bool force = false;
  HashAlgo hash = HashAlgo::xxh3_128;
  int threads = 0;
  Verbosity verbosity;
  FederatedCli fed;
};

void report(const MergeOptions& o, const Plan& plan, const Method& method, const std::vector<Reader*>& inputs) {
  for (const PlanEntry& e : plan.entries)
    if (e.action != Action::average)
      note(o.verbosity, 1,
           "not averaged: " + e.info.name + " (" + std::string(dtype_name(e.info.dtype)) +
               (is_optimizer_hyperparameter(e.info) ? " optimizer hyper-parameter, " : ", ") +
               (e.action == Action::check_equal ? "identical in every input" : "copied from input 1") + ")");
  for (const auto& w : plan.warnings) note(o.verbosity, 0, "warning: " + w);
  report_excluded(plan, o.verbosity);
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
  if (const auto* fed = dynamic_cast<const FederatedMethod*>(&method))
    for (const std::string& line : fed->report()) std::printf("%s\n", line.c_str());
}

// The bytes of one input that go through the backend's kernels (what --device auto weighs).
std::uint64_t averaged_bytes(const Plan& plan) {
  std::uint64_t bytes = 0;
  for (const PlanEntry& e : plan.entries)
    if (e.action == Action::average) bytes += e.info.bytes();
  return bytes;
}

// Every path the output must not replace: the inputs, the base and the server state.
std::vector<std::string> protected_paths(const MergeOptions& o) {
  std::vector<std::string> paths = o.inputs;
  if (!o.fed.base.empty()) paths.push_back(o.fed.base);
  if (!o.fed.state.empty()) paths.push_back(o.fed.state);
  return paths;
}

// The weights of --weights, or of --weight-by read from the inputs' metadata.
std::vector<double> input_weights(const MergeOptions& o, const std::vector<Reader*>& inputs) {
  if (o.fed.weight_by.empty()) return parse_weights(o.weights);
  return weights_from_metadata(inputs, o.fed.weight_by);
}

int run_merge(MergeOptions& o) {
  FederatedOptions& fed = o.fed.options;
  o.fed.resolve();
  const bool federated = is_federated(fed) || !o.fed.weight_by.empty();
  const std::size_t least = fed.has_base || fed.inputs == InputKind::deltas ? 1 : 2;
  if (o.inputs.size() < least) fail_usage("merge needs at least two inputs (one with --base or deltas)");
  if (!o.weights.empty() && !o.fed.weight_by.empty()) fail_usage("give either --weights or --weight-by, not both");
  validate_weights(parse_weights(o.weights), o.inputs.size());
  // Validation only needs to know whether there are weights; --weight-by's values come from the inputs.
  fed.weights = o.fed.weight_by.empty() ? parse_weights(o.weights) : std::vector<double>(o.inputs.size(), 1.0);
  if (federated) validate_federated(fed, o.inputs.size());
  if (fed.server.kind != ServerOptKind::none && fed.server.kind != ServerOptKind::sgd && !fed.has_state)
    note(o.verbosity, 0, "no --state: the server optimizer's moments start from zero and are not saved");
  std::string format = output_format(o.output, o.format);
  check_output_not_input(o.output, protected_paths(o));
  const Overwrite overwrite = o.force ? Overwrite::yes : Overwrite::no;
  if (overwrite == Overwrite::no && std::filesystem::exists(o.output))
    throw Error(ExitCode::usage, o.output, "already exists (use --force to replace it)");
  apply_threads(o.threads);

  const auto readers = open_inputs(o.inputs);
  const std::vector<Reader*> inputs = raw(readers);
  format = output_format(o.output, o.format, inputs[0]);
  const std::vector<double> weights = input_weights(o, inputs);
  Plan plan = build_plan(inputs, o.plan);
  if (!o.out_dtype.empty()) set_out_dtype(plan, *dtype_from_name(o.out_dtype));
  auto base = fed.has_base ? open_reader(o.fed.base) : nullptr;
  const std::vector<std::size_t> base_source = base ? match_base(plan, *base) : std::vector<std::size_t>{};
  auto state = fed.has_state ? std::make_unique<ServerState>(o.fed.state, plan, fed.server) : nullptr;
  auto backend = make_backend(o.device, averaged_bytes(plan) * inputs.size(), o.verbosity);
  fed.weights = weights;
  auto method = federated ? make_federated(*backend, plan, fed, state.get()) : make_weighted_mean(*backend, weights);
  Engine engine(plan, inputs, *method, *backend);
  if (base) engine.set_base(base.get(), base_source);
  engine.verify();

  const std::vector<TensorInfo> out_tensors = output_tensors(plan);
  check_free_space(o.output, least_output_bytes(out_tensors));
  AtomicFile out(o.output, overwrite);
  const OutputSpec spec{out_tensors, inputs.front(), plan.dropped_from_first,
                        make_provenance("merge", method->describe(), input_files(inputs), o.out_dtype, o.hash)};
  {
    auto writer = create_writer(format, out.tmp_path(), o.output, spec);
    if (state) state->begin_write();
    engine.run(*writer);
  }
  out.commit();
  if (state) state->commit();
  report(o, plan, *method, inputs);
  return 0;
}

}  // namespace

RunFn setup_merge(CLI::App& app) {
  auto o = std::make_shared<MergeOptions>();
  app.add_option("inputs", o->inputs, "Checkpoints to merge (two or more; one or more with --base)")->required();
  app.add_option("-o,--output", o->output, "Output checkpoint")->required();
  app.add_option("-w,--weights", o->weights, "Comma-separated weights, one per input, normalised by their sum")
      ->type_name("LIST");
  add_format(app, o->format);
  add_out_dtype(app, o->out_dtype);
  add_hash(app, o->hash);
  app.add_flag("-f,--force", o->force, "Replace an existing output");
  add_plan_options(app, o->plan);
  add_federated_options(app, o->fed);
  add_threads(app, o->threads);
  add_device(app, o->device);
  add_verbosity(app, o->verbosity);
  return [o] { return run_merge(*o); };
}

}  // namespace wavg::cli
