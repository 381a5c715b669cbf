// wavg convert: one input through the same plan, engine and writers as merge. Tensors whose dtype is kept are
// copied byte for byte; floating-point tensors changed by --out-dtype go through the mean of one input, which is
// the value itself rounded once to the new type.

#include <cstdio>

#include "cli/common.hpp"
#include "cli/progress.hpp"
#include "pipeline/pipeline.hpp"
#include "wavg/engine.hpp"
#include "wavg/error.hpp"
#include "wavg/free_space.hpp"
#include "wavg/provenance.hpp"

namespace wavg::cli {

namespace {

struct ConvertOptions {
  std::string input;
  std::string output;
  std::string format;
  std::optional<DType> out_dtype;
  Device device = Device::automatic;
  int threads = 0;
  bool force = false;
  HashAlgo hash = HashAlgo::xxh3_128;
  bool tf_state = false;
  std::uint64_t shard_size = 0;
  PlanOptions plan;  // only --include / --exclude
  Verbosity verbosity;
};

int run_convert(const ConvertOptions& o) {
  const std::string early_format = output_format(o.output, o.format);  // refused before the input opens
  check_tf_state(o.tf_state, early_format);
  check_shard_size(o.shard_size, early_format);
  const Overwrite overwrite = o.force ? Overwrite::yes : Overwrite::no;
  pipeline::check_output(output_file(early_format, o.output), {o.input}, overwrite);

  apply_threads(o.threads);
  auto reader = open_reader(o.input);
  const std::string format = output_format(o.output, o.format, reader.get());
  const std::vector<Reader*> inputs{reader.get()};
  Plan plan = build_plan(inputs, o.plan);
  report_excluded(plan, o.verbosity);
  for (PlanEntry& e : plan.entries)
    // Hyper-parameters and counters keep their dtype (a .keras learning rate stays float32 under float16 weights).
    e.action = is_float(e.info.dtype) && o.out_dtype && *o.out_dtype != e.info.dtype &&
                       e.info.role != Role::hyper_parameter && e.info.role != Role::counter
                   ? Action::average
                   : Action::copy_first;
  if (o.out_dtype) set_out_dtype(plan, *o.out_dtype);
  std::uint64_t retyped = 0;
  for (const PlanEntry& e : plan.entries)
    if (e.action == Action::average) retyped += e.info.bytes();
  auto backend = make_backend(o.device, retyped, o.verbosity);
  auto method = make_weighted_mean(*backend, {});
  Engine engine(plan, inputs, *method, *backend);

  const std::vector<TensorInfo> out_tensors = output_tensors(plan);
  check_free_space(o.output, least_output_bytes(out_tensors));
  pipeline::Output out(o.output, format, overwrite,
                       {out_tensors, reader.get(), plan.dropped_from_first,
                        make_provenance("convert", "copy", input_files({reader.get()}), out_dtype_name(o.out_dtype), o.hash),
                        o.tf_state, o.shard_size},
                       reader->files());
  ProgressLine progress(o.verbosity, "convert");
  progress.follow(engine);
  pipeline::pace_hashing(engine, out.spec().provenance);
  engine.run(out.writer());
  out.commit();
  progress.erase();
  note_kept_entries(o.verbosity, *reader, format);
  if (!o.verbosity.quiet)
    std::fprintf(report_stream(o.output), "converted %s (%s) to %s (%s): %zu tensors, %zu retyped\n", o.input.c_str(),
                reader->format_name().c_str(), o.output.c_str(), format.c_str(), plan.entries.size(),
                plan.count(Action::average));
  return 0;
}

}  // namespace

RunFn setup_convert(CLI::App& app) {
  auto o = std::make_shared<ConvertOptions>();
  app.add_option("input", o->input, "Checkpoint to convert")->required();
  add_output(app, o->output, o->format, o->force);
  add_written_options(app, *o);
  add_filters(app, o->plan);
  add_run_options(app, *o);
  return [o] { return run_convert(*o); };
}

}  // namespace wavg::cli
