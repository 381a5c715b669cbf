// wavg convert: one input through the same plan, engine and writers as merge. Tensors whose dtype is kept are
// copied byte for byte; floating-point tensors changed by --out-dtype go through the mean of one input, which is
// the value itself rounded once to the new type.

#include <cstdio>

#include "cli/common.hpp"
#include "cli/progress.hpp"
#include "pipeline/pipeline.hpp"
#include "wavg/engine.hpp"

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
  std::string describe(const Method&) override { return "copy"; }
  void committed() override { m_progress.erase(); }

 private:
  const ConvertOptions& m_o;
  ProgressLine m_progress;
};

pipeline::Job validate(const ConvertOptions& o) {
  const Overwrite overwrite = o.force ? Overwrite::yes : Overwrite::no;
  pipeline::Target target =
      pipeline::check_target({o.output, o.format, overwrite, o.tf_state, o.shard_size}, {o.input});
  return {{o.input}, std::move(target), "convert", o.plan, o.out_dtype, o.hash, {}};
}

int run_convert(const ConvertOptions& o) {
  const pipeline::Job job = validate(o);
  apply_threads(o.threads);
  ConvertSteps steps(o);
  const pipeline::Run run = pipeline::run(job, steps);
  const Reader& input = *run.readers.front();
  note_kept_entries(o.verbosity, input, run.output.format_id());
  if (!o.verbosity.quiet)
    std::fprintf(report_stream(o.output), "converted %s (%s) to %s (%s): %zu tensors, %zu retyped\n", o.input.c_str(),
                 input.format_name().c_str(), o.output.c_str(), codec(run.output.format_id()).name,
                 run.plan.entries.size(), run.plan.count(Action::average));
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
