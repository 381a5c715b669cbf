// wavg convert: one input through the same plan, engine and writers as merge. Tensors whose dtype is kept are
// copied byte for byte; floating-point tensors changed by --out-dtype go through the mean of one input, which is
// the value itself rounded once to the new type.

#include <cstdio>
#include <map>

#include "cli/common.hpp"
#include "cli/progress.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/ranks.hpp"
#include "wavg/engine.hpp"
#include "wavg/format_facts.hpp"

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
  std::string block_type;  // --out-dtype q8_0 or q4_0 (a GGUF output)
  PlanOptions plan;  // only --include / --exclude
  std::vector<std::string> set_meta;  // --set-meta KEY=VALUE, as given
  std::map<std::string, std::string> metadata;  // the same, parsed by validate()
  Verbosity verbosity;
};

// Parses --set-meta KEY=VALUE into `o.metadata` (usage errors, exit 2). wavg_* keys are the provenance's own.
void parse_set_meta(ConvertOptions& o) {
  for (const std::string& item : o.set_meta) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) fail_usage("--set-meta " + item + ": give KEY=VALUE, such as num_examples=600");
    const std::string key = item.substr(0, eq);
    if (key.rfind("wavg_", 0) == 0)
      fail_usage("--set-meta " + item + ": wavg_* keys are the provenance, which wavg writes itself");
    o.metadata[key] = item.substr(eq + 1);
  }
}

// Refuses --set-meta for an output format whose files hold no metadata wavg reads back (the registry says why).
void check_metadata_place(const ConvertOptions& o, FormatId format) {
  if (o.metadata.empty() || format == FormatId::none) return;
  if (const char* why = codec(format).no_metadata)
    fail_usage("--set-meta: " + a_format(format) + " output has no metadata (" + why +
               "); convert to a format that has, such as hdf5 or safetensors");
}

// What convert adds to the plain job: only floating-point tensors whose dtype changes go through the mean (of one
// input, the value itself rounded once); every other tensor is copied byte for byte.
class ConvertSteps final : public pipeline::Steps {
 public:
  explicit ConvertSteps(const ConvertOptions& o) : m_o(o), m_progress(o.verbosity, "convert") {}

  void plan(Plan& plan, const std::vector<Reader*>&) override {
    report_excluded(plan, m_o.verbosity);
    for (PlanEntry& e : plan.entries)
      // Hyper-parameters and counters keep their dtype (a .keras learning rate stays float32 under float16 weights).
      e.action = is_float(e.info.dtype) && m_o.out_dtype && *m_o.out_dtype != e.info.dtype &&
                         e.info.role != Role::hyper_parameter && e.info.role != Role::counter
                     ? Action::average
                     : Action::copy_first;
  }
  std::unique_ptr<Backend> backend(const Plan&, std::size_t) override {
    return make_backend(m_o.device, m_o.verbosity);
  }
  void engine(Engine& engine) override { m_progress.follow(engine); }
  void chose(const pipeline::Template&, FormatId format) override { check_metadata_place(m_o, format); }
  std::string describe(const Method&) override { return "copy"; }
  // --set-meta's entries go where every writer records the provenance: the format's file-level metadata.
  void output(OutputSpec& spec, const pipeline::Run&) override {
    for (const auto& [key, value] : m_o.metadata) spec.provenance.add(key, value);
  }
  void committed() override { m_progress.erase(); }

 private:
  const ConvertOptions& m_o;
  ProgressLine m_progress;
};

pipeline::Job validate(ConvertOptions& o) {
  parse_set_meta(o);
  const Overwrite overwrite = o.force ? Overwrite::yes : Overwrite::no;
  pipeline::Target target =
      pipeline::check_target({o.output, o.format, overwrite, o.tf_state, o.shard_size, o.block_type}, {o.input});
  check_metadata_place(o, target.format_id());
  return {{o.input}, std::move(target), "convert", o.plan, o.out_dtype, o.hash, {}};
}

int convert(ConvertOptions& o) {
  pipeline::Job job;
  pipeline::agreed([&] { job = validate(o); });
  apply_threads(o.threads);
  ConvertSteps steps(o);
  const pipeline::Run run = pipeline::run(job, steps);
  const Reader& input = *run.readers.front();
  note_kept_entries(o.verbosity, input, run.output.format_id());
  if (!o.verbosity.quiet)
    std::fprintf(report_stream(o.output), "converted %s (%s) to %s (%s): %zu tensors, %zu retyped\n", o.input.c_str(),
                 input.format_name().c_str(), o.output.c_str(), codec(run.output.format_id()).name,
                 run.plan.entries.size(), run.plan.count(Action::average));
  report_division(run.division, o.verbosity);
  return 0;
}

// Under mpirun or srun every rank converts a share (pipeline/distributed.hpp); rank 0 reports.
int run_convert(ConvertOptions& o) {
  if (!pipeline::launched_by_mpi()) return convert(o);
  return pipeline::with_mpi([&] {
    if (pipeline::mpi_rank() > 0) o.verbosity = quiet_rank(o.verbosity);
    return convert(o);
  });
}

}  // namespace

RunFn setup_convert(CLI::App& app) {
  auto o = std::make_shared<ConvertOptions>();
  app.add_option("input", o->input, "Checkpoint to convert")->required();
  add_output(app, o->output, o->format, o->force);
  add_written_options(app, *o);
  add_filters(app, o->plan);
  app.add_option("--set-meta", o->set_meta,
                 "Set this file-level metadata entry of the output (repeatable; what --weight-by and --staleness "
                 "read): HDF5 root attributes, safetensors __metadata__, ...")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  add_run_options(app, *o);
  return [o] { return run_convert(*o); };
}

}  // namespace wavg::cli
