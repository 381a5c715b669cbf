// wavg align: permute B's hidden units to match A's (weight matching) and write B, computing what it computed.

#include <cstdio>
#include <filesystem>

#include "cli/align_options.hpp"
#include "cli/progress.hpp"
#include "pipeline/pipeline.hpp"
#include "wavg/error.hpp"
#include "wavg/provenance.hpp"

namespace wavg::cli {

namespace {

namespace fs = std::filesystem;

struct AlignOptions {
  std::string input;
  std::string to;
  std::string output;
  std::string format;
  AlignCli align;
  bool force = false;
  HashAlgo hash = HashAlgo::xxh3_128;
  int threads = 0;
  Verbosity verbosity;
};

// The conductor's steps for align: B (the job's one input) is matched to A (--to) and the engine sees B with its
// units permuted; the output keeps B's own file as its template (its structure and other entries), so it may be any
// target (a file, a folder, `-o -`). The engine leaves out a tensor it does not average where the writer already
// holds the template's values, and those are B's unpermuted ones: plan() makes sure no permuted tensor is such.
class AlignSteps final : public pipeline::Steps {
 public:
  AlignSteps(const AlignOptions& o, const pipeline::Target& target)
      : m_o(o), m_target(target), m_progress(o.verbosity, "align") {}

  std::vector<Reader*> inputs(const std::vector<Reader*>& opened) override {
    Reader& input = *opened.front();
    // The output's format, settled now so that a wrong one costs no alignment (run() settles its own copy again).
    pipeline::Target settled = m_target;
    pipeline::settle(settled, opened);
    m_reference = open_reader(m_o.to);
    m_spec = align::make_spec(*m_reference, m_o.align.spec);
    align::check_spec_fits(m_spec, *m_reference, input);
    // The weights are views into the mappings and scratch copies, gone before the engine writes.
    m_result = align::align_models(
        m_spec, {align::load_weights(*m_reference, m_spec), align::load_weights(input, m_spec)}, m_o.align.match);
    m_aligned = align::permuted_reader(input, m_spec, m_result.perms[1]);
    return {m_aligned.get()};
  }
  // One input, every float tensor averaged (x / 1: its own value); what a plan copies is a scalar or an integer
  // tensor, which no permutation moves.
  void plan(Plan& plan, const std::vector<Reader*>&) override {
    for (const PlanEntry& e : plan.entries)
      WAVG_ASSERT(e.action == Action::average || e.same_as != k_no_entry || !m_spec.tensors[e.source[0]].permuted());
  }
  void engine(Engine& engine) override { m_progress.follow(engine); }
  std::vector<std::string> protect() override { return m_reference->files(); }
  // run() builds the provenance: the job's command, this, its input and its reference (Job::references).
  std::string describe(const Method&) override { return "weight matching to " + fs::path(m_o.to).filename().string(); }
  void committed() override { m_progress.erase(); }

  const align::PermSpec& spec() const { return m_spec; }
  const align::MergeManyResult& result() const { return m_result; }

 private:
  const AlignOptions& m_o;
  const pipeline::Target& m_target;
  ProgressLine m_progress;
  std::unique_ptr<Reader> m_reference;
  align::PermSpec m_spec;
  align::MergeManyResult m_result;
  std::unique_ptr<Reader> m_aligned;
};

int run_align(const AlignOptions& o) {
  pipeline::Job job;
  job.inputs = {o.input};
  job.output = pipeline::check_target({o.output, o.format, o.force ? Overwrite::yes : Overwrite::no}, {o.input, o.to});
  job.command = "align";
  job.hash = o.hash;
  job.references = {o.to};
  apply_threads(o.threads);
  AlignSteps steps(o, job.output);
  pipeline::run(job, steps);

  if (!o.verbosity.quiet) {
    const align::PermSpec& spec = steps.spec();
    const align::MergeManyResult& all = steps.result();
    const std::vector<align::Perm>& perms = all.perms[1];
    std::FILE* out = report_stream(o.output);
    std::size_t units = 0, moved = 0;
    for (const align::Perm& p : perms) units += p.size(), moved += align::moved(p);
    std::fprintf(out, "aligned %s to %s into %s: %zu permutation group(s), %zu of %zu units moved, %zu passes%s\n",
                 o.input.c_str(), o.to.c_str(), o.output.c_str(), spec.group_names.size(), moved, units, all.iterations,
                 all.converged ? "" : " (stopped by --align-iter before converging)");
    for (const std::string& line : describe_groups(spec, perms)) std::fprintf(out, "  %s\n", line.c_str());
  }
  return 0;
}

}  // namespace

RunFn setup_align(CLI::App& app) {
  auto o = std::make_shared<AlignOptions>();
  app.add_option("input", o->input, "Checkpoint whose hidden units are permuted (B)")->required();
  app.add_option("--to", o->to, "Checkpoint to match (A)")->required();
  add_output(app, o->output, o->format, o->force, "Output checkpoint: B with its units permuted");
  add_align_options(app, o->align, AlignFor::align);
  add_hash(app, o->hash);
  add_threads(app, o->threads);
  add_verbosity(app, o->verbosity);
  add_progress(app, o->verbosity);
  return [o] { return run_align(*o); };
}

}  // namespace wavg::cli
