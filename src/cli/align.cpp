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

// Writes every tensor of `aligned` (permuted ones from memory; the rest only when the writer lacks them) through
// the pipeline's Output, so the output may be any target (a file, a folder, `-o -`), checked as every writing
// subcommand's is (check_target before any input opens, settle). Not through pipeline::run and its engine: the
// output's template must be B's own file (its structure, its other entries), and the engine skips every tensor it
// does not average when the writer already holds the template's values (Engine::run: a copied or checked tensor
// of input 1) -- B's values, which are wrong exactly where the units were permuted (an optimizer moment the plan
// copies, an integer tensor). Here the test is the permutation itself, so no permuted tensor can be skipped; the
// engine has no way to be told that a template value is stale, and teaching it would add a case to every merge to
// serve this one copy.
void write_aligned(Reader& aligned, Reader& original, const align::PermSpec& perm_spec, const pipeline::Target& target,
                   const std::vector<std::string>& protect, const AlignOptions& o) {
  pipeline::Output out(target,
                       {original.tensors(),
                        &original,
                        {},
                        make_provenance("align", "weight matching to " + fs::path(o.to).filename().string(),
                                        {o.input, o.to}, "", o.hash)},
                       protect);
  Writer& writer = out.writer();
  ProgressLine progress(o.verbosity, "align");
  std::uint64_t total = 0, done = 0;
  for (const TensorInfo& t : out.spec().tensors) total += t.bytes();
  std::vector<unsigned char> bytes;
  for (std::size_t i = 0; i < out.spec().tensors.size(); ++i) {
    const TensorInfo& t = out.spec().tensors[i];
    done += t.bytes();
    if (!perm_spec.tensors[i].permuted() && writer.holds_template_values(i)) continue;
    bytes.resize(t.bytes());
    aligned.read(i, 0, t.count(), bytes.data());
    writer.write(i, 0, t.count(), bytes.data());
    progress.update(done, total);
  }
  writer.finish();
  out.commit();
  progress.erase();
}

int run_align(const AlignOptions& o) {
  pipeline::Target target =
      pipeline::check_target({o.output, o.format, o.force ? Overwrite::yes : Overwrite::no}, {o.input, o.to});
  apply_threads(o.threads);

  auto reference = open_reader(o.to);
  auto input = open_reader(o.input);
  pipeline::settle(target, {input.get()});
  const align::PermSpec spec = align::make_spec(*reference, o.align.spec);
  align::check_spec_fits(spec, *reference, *input);
  std::vector<align::Weights> models;
  models.push_back(align::load_weights(*reference, spec));
  models.push_back(align::load_weights(*input, spec));
  const align::MergeManyResult all = align::align_models(spec, models, o.align.match);
  const std::vector<align::Perm>& perms = all.perms[1];
  auto aligned = align::permuted_reader(*input, spec, perms);
  write_aligned(*aligned, *input, spec, target, pipeline::files_of({input.get(), reference.get()}), o);

  if (!o.verbosity.quiet) {
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
