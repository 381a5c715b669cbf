// wavg merge: open inputs, build the plan, run the engine, commit the output.

#include <cstdio>
#include <optional>

#include "cli/align_options.hpp"
#include "cli/common.hpp"
#include "cli/eval_command.hpp"
#include "cli/federated_options.hpp"
#include "cli/progress.hpp"
#include "cli/recipe.hpp"
#include "cli/sequence.hpp"
#include "cli/soup_options.hpp"
#include "pipeline/pipeline.hpp"
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
  std::optional<DType> out_dtype;
  Device device = Device::automatic;
  std::string eval;
  PlanOptions plan;
  bool force = false;
  HashAlgo hash = HashAlgo::xxh3_128;
  bool tf_state = false;
  std::uint64_t shard_size = 0;
  int threads = 0;
  Verbosity verbosity;
  FederatedCli fed;
  TaskCli task;
  SequenceCli seq;
  AlignCli align;
  enum class Companions { base, input1 } companions = Companions::base;  // --tokenizer-source
  std::string recipe_path;      // --recipe
  std::optional<Recipe> recipe;
};

// With --recipe, sets the inputs, base, method and its values from the mergekit YAML (recipe.cpp); a YAML file
// given as an input is pointed at --recipe.
void apply_recipe(MergeOptions& o) {
  for (const std::string& in : o.inputs)
    if (looks_like_recipe(in)) fail_usage(in + " looks like a mergekit recipe: run it with --recipe " + in);
  if (o.recipe_path.empty()) return;
  if (!o.inputs.empty() || !o.fed.base.empty() || !o.weights.empty() || o.task.lambda || o.task.density ||
      o.task.t || o.task.rescale || o.task.normalize || o.out_dtype || o.fed.options.robust.method != Aggregator::mean)
    fail_usage("--recipe gives the models, base, method, parameters and dtype itself: give them only there");
  Recipe& r = o.recipe.emplace(read_recipe(o.recipe_path));
  o.inputs = r.inputs;
  o.fed.base = r.base;
  o.fed.options.robust.method = r.method;
  for (std::size_t k = 0; k < r.weights.size(); ++k) {
    char exact[32];
    std::snprintf(exact, sizeof exact, "%s%.17g", k ? "," : "", r.weights[k]);
    o.weights += exact;
  }
  o.task = {r.lambda, r.density, r.t, r.rescale, r.normalize, r.values, r.linear};
  o.out_dtype = r.out_dtype;
  o.companions = r.tokenizer_from_base ? MergeOptions::Companions::base : MergeOptions::Companions::input1;
}

void report(const MergeOptions& o, const std::string& format, const Plan& plan, const Method& method,
            const std::vector<Reader*>& inputs) {
  report_roles(plan, o.verbosity);
  note_kept_entries(o.verbosity, *inputs.front(), format);
  for (const std::string& d : method.decisions()) note(o.verbosity, 1, d);
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
  std::FILE* out = report_stream(o.output);
  std::fprintf(out, "merged %zu inputs (%s) into %s: %zu tensors averaged (%llu values, %s), %zu copied\n", inputs.size(),
              inputs.front()->layout().c_str(), o.output.c_str(), averaged,
              static_cast<unsigned long long>(plan.values(Action::average)), method.describe().c_str(), other);
  for (const std::string& line : method.report()) std::fprintf(out, "%s\n", line.c_str());
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

// Every file the output must not replace: the inputs' (shards included), the base's and the server state.
std::vector<std::string> protected_files(const MergeOptions& o, const std::vector<Reader*>& inputs,
                                         const Reader* base) {
  std::vector<std::string> files = pipeline::files_of(inputs);
  if (base)
    for (std::string& f : base->files()) files.push_back(std::move(f));
  if (!o.fed.state.empty()) files.push_back(o.fed.state);
  return files;
}

// The weights of --weights, or of --weight-by read from the inputs' metadata.
std::vector<double> input_weights(const MergeOptions& o, const std::vector<Reader*>& inputs) {
  if (o.fed.weight_by.empty()) return parse_weights(o.weights);
  return weights_from_metadata(inputs, o.fed.weight_by);
}

// Tells whether a task-vector method (task arithmetic, TIES, DARE, SLERP, model stock) runs.
bool task_run(const MergeOptions& o) { return is_task_method(o.fed.options.robust.method); }

// Tells whether a federated method runs rather than the (weighted) mean.
bool federated_run(const MergeOptions& o) {
  return !task_run(o) && (is_federated(o.fed.options) || !o.fed.weight_by.empty());
}

// Checks the options against each other and the number of inputs (usage errors, exit 2), before any file opens.
// A checkpoint sequence (--last) is expanded first: it supplies the inputs and their weights.
void validate_options(MergeOptions& o) {
  apply_sequence(o.seq, o.inputs, o.weights, o.verbosity);
  if (!o.eval.empty()) check_eval_command(o.eval);
  FederatedOptions& fed = o.fed.options;
  o.fed.resolve();
  const std::size_t least = fed.has_base || fed.inputs == InputKind::deltas ? 1 : 2;
  if (o.inputs.size() < least) fail_usage("merge needs at least two inputs (one with --base or deltas)");
  if (!o.weights.empty() && !o.fed.weight_by.empty()) fail_usage("give either --weights or --weight-by, not both");
  check_align_inputs(o.align, fed.has_base || fed.inputs == InputKind::deltas);
  if (!task_run(o)) validate_weights(parse_weights(o.weights), o.inputs.size());  // task vectors take negatives
  // Validation only needs to know whether there are weights; --weight-by's values come from the inputs.
  fed.weights = o.fed.weight_by.empty() ? parse_weights(o.weights) : std::vector<double>(o.inputs.size(), 1.0);
  if (federated_run(o)) validate_federated(fed, o.inputs.size());
  if (task_run(o)) validate_task(o.task.resolve(fed, fed.weights), fed, o.inputs.size());
  if (fed.server.kind != ServerOptKind::none && fed.server.kind != ServerOptKind::sgd && !fed.has_state)
    note(o.verbosity, 0, "no --state: the server optimizer's moments start from zero and are not saved");
  check_tf_state(o.tf_state, output_format(o.output, o.format));
  check_shard_size(o.shard_size, output_format(o.output, o.format));
}

int run_merge(MergeOptions& o) {
  apply_recipe(o);
  if (o.recipe && !o.recipe->slices.empty())
    return run_passthrough({o.recipe->slices, o.output, o.format, o.recipe->text, o.out_dtype,
                            o.force ? Overwrite::yes : Overwrite::no, o.hash, o.verbosity});
  validate_options(o);
  FederatedOptions& fed = o.fed.options;
  const Overwrite overwrite = o.force ? Overwrite::yes : Overwrite::no;
  pipeline::check_output(output_file(output_format(o.output, o.format), o.output), protected_paths(o), overwrite);
  apply_threads(o.threads);

  const auto readers = pipeline::open_inputs(o.inputs);
  const Aligned aligned =
      o.align.method == "weights" ? align_for_merge(pipeline::raw(readers), o.align, o.verbosity) : Aligned{};
  // The plan and the engine see the aligned inputs; the output keeps input 1's own file as its template.
  const std::vector<Reader*> inputs = aligned.readers.empty() ? pipeline::raw(readers) : aligned.raw();
  const std::vector<double> weights = input_weights(o, inputs);
  Plan plan = build_plan(inputs, o.plan);
  if (!aligned.readers.empty()) check_aligned_plan(plan, aligned);
  if (o.out_dtype) set_out_dtype(plan, *o.out_dtype);
  auto base = fed.has_base ? open_reader(o.fed.base) : nullptr;
  const std::vector<std::size_t> base_source = base ? match_base(plan, *base) : std::vector<std::size_t>{};
  auto state = fed.has_state ? std::make_unique<ServerState>(o.fed.state, pipeline::open_if_exists(o.fed.state),
                                                              plan, fed.server)
                             : nullptr;
  const bool task = task_run(o);
  auto backend = task ? task_backend(o.device, o.verbosity)
                      : make_backend(o.device, averaged_bytes(plan) * inputs.size(), o.verbosity);
  fed.weights = weights;
  if (fed.staleness_fn) fed.staleness = staleness_from_metadata(*base, inputs, o.fed.staleness, *fed.staleness_fn);
  auto method = task              ? make_task_method(*backend, plan, o.task.resolve(fed, weights))
                : federated_run(o) ? make_federated(*backend, plan, fed, state.get())
                                   : make_weighted_mean(*backend, weights);
  Engine engine(plan, inputs, *method, *backend);
  if (base) engine.set_base(base.get(), base_source);
  ProgressLine progress(o.verbosity, "merge", inputs.size());
  progress.follow(engine);
  engine.verify();

  const std::vector<TensorInfo> out_tensors = output_tensors(plan);
  check_free_space(o.output, least_output_bytes(out_tensors));
  const std::string format = output_format(o.output, o.format, inputs[0]);
  const pipeline::Template templ = pipeline::choose_template(format, pipeline::raw(readers), plan, out_tensors);
  if (templ.index != 0)  // input 1 is the rule; another input is worth saying
    note(o.verbosity, 1, "template: " + o.inputs[templ.index] + " (input " + std::to_string(templ.index + 1) +
                             "): the output keeps its structure and metadata, input 1 has none in " + format);
  Provenance provenance =
      make_provenance("merge", method->describe() + sequence_note(o.seq), input_files(pipeline::raw(readers)),
                      out_dtype_name(o.out_dtype), o.hash, base ? base->files() : std::vector<std::string>{});
  if (o.recipe) provenance.add("wavg_recipe", o.recipe->text);
  pipeline::Output out(o.output, format, overwrite,
                       {out_tensors, templ.input, templ.dropped, std::move(provenance), o.tf_state, o.shard_size,
                        o.companions == MergeOptions::Companions::base ? base.get() : nullptr,
                        o.recipe ? decltype(OutputSpec::extra_files){{"mergekit_config.yml", o.recipe->text}}
                                 : decltype(OutputSpec::extra_files){}},
                       protected_files(o, pipeline::raw(readers), base.get()));
  std::optional<pipeline::Output> state_out;
  if (state) {
    state_out.emplace(o.fed.state, output_format(o.fed.state, ""), Overwrite::yes, state->output_spec(),
                      pipeline::files_of(inputs));
    state->begin_write(state_out->writer());
  }
  pipeline::pace_hashing(engine, out.spec().provenance);
  engine.run(out.writer());
  out.commit();
  progress.erase();
  if (state) {
    state->finish();
    state_out->commit();
  }
  report(o, format, plan, *method, inputs);
  if (!o.eval.empty() && !o.verbosity.quiet) print_scores(o.eval, o.inputs, o.output);
  return 0;
}

}  // namespace

RunFn setup_merge(CLI::App& app) {
  auto o = std::make_shared<MergeOptions>();
  app.add_option("inputs", o->inputs, "Checkpoints to merge (two or more; one or more with --base)");
  app.add_option("--recipe", o->recipe_path, "Run a mergekit YAML recipe (models, base_model, merge_method, ...)")
      ->type_name("FILE.yml");
  add_output(app, o->output, o->format, o->force);
  app.add_option("-w,--weights", o->weights, "Comma-separated weights, one per input, normalised by their sum")
      ->type_name("LIST");
  add_written_options(app, *o);
  add_plan_options(app, o->plan);
  add_federated_options(app, o->fed);
  add_task_options(app, o->task);
  add_sequence_options(app, o->seq);
  add_eval_option(app, o->eval);
  add_align_options(app, o->align, AlignFor::merge);
  add_run_options(app, *o);
  add_choice(app, "--tokenizer-source", o->companions,
             {{"base", MergeOptions::Companions::base}, {"input1", MergeOptions::Companions::input1}},
             "Folder outputs with --base: whose config.json, tokenizer and other files the output copies "
             "(mergekit's tokenizer_source)");
  return [o] { return run_merge(*o); };
}

}  // namespace wavg::cli
