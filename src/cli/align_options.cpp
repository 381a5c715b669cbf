#include "cli/align_options.hpp"

#include "wavg/error.hpp"

namespace wavg::cli {

void add_align_options(CLI::App& app, AlignCli& a, AlignFor what) {
  const std::string group = "Alignment";
  if (what == AlignFor::merge)
    app.add_option("--align", a.method,
                   "Permute hidden units to match before averaging: none or weights (weight matching; MergeMany for "
                   "more than two inputs)")
        ->check(CLI::IsMember({"none", "weights"}))
        ->default_str("none")
        ->group(group);
  CLI::Option* perm_spec =
      app.add_option("--perm-spec", a.spec.file,
                     "JSON file naming, for each tensor, the permutation group of each axis (default: inferred from "
                     "the model config)")
          ->group(group);
  app.add_flag("--assume-sequential", a.spec.assume_sequential,
               "Infer the permutation spec of a PyTorch or safetensors state_dict, which does not show how layers "
               "connect, as a plain chain of its modules in order (wrong for skip connections and ConvTranspose)")
      ->excludes(perm_spec)
      ->group(group);
  app.add_option("--align-iter", a.match.max_iter,
                 "Most passes over the permutation groups (merge: rounds over the models) (default: 100)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}).description(""))
      ->group(group);
  app.add_option("--align-restarts", a.match.restarts,
                 "Searches from different visiting orders; the one whose average agrees best is kept (default: 1 "
                 "for two models, 4 for more)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000}).description(""))
      ->group(group);
  app.add_option(what == AlignFor::merge ? "--align-seed" : "--seed", a.match.seed,
                 "Seed of the order the permutation groups are visited in (default: 1)")
      ->group(group);
}

void check_align_inputs(const AlignCli& a, bool updates) {
  if (a.method != "none" && updates)
    fail_usage("--align permutes models, not updates: it does not go with --base or --inputs-are deltas");
}

std::vector<Reader*> Aligned::raw() const {
  std::vector<Reader*> out;
  for (const auto& r : readers) out.push_back(r.get());
  return out;
}

std::vector<std::string> describe_groups(const align::PermSpec& spec, const std::vector<align::Perm>& perms) {
  std::vector<std::string> lines;
  for (std::size_t g = 0; g < spec.group_names.size(); ++g)
    lines.push_back(spec.group_names[g] + ": " + std::to_string(spec.group_sizes[g]) + " units, " +
                    std::to_string(align::moved(perms[g])) + " moved");
  return lines;
}

Aligned align_for_merge(const std::vector<Reader*>& inputs, const AlignCli& a, const Verbosity& v) {
  Aligned out;
  out.spec = align::make_spec(*inputs[0], a.spec);
  for (std::size_t k = 1; k < inputs.size(); ++k) align::check_spec_fits(out.spec, *inputs[0], *inputs[k]);
  std::vector<align::Weights> weights;
  for (Reader* r : inputs) weights.push_back(align::load_weights(*r, out.spec));
  const align::MergeManyResult r = align::align_models(out.spec, weights, a.match);
  const auto& perms = r.perms;
  const std::size_t iterations = r.iterations;
  const bool converged = r.converged;
  note(v, 0,
       std::string(inputs.size() == 2 ? "weight matching" : "MergeMany") + ": " +
           std::to_string(out.spec.group_names.size()) + " permutation groups (" + out.spec.source + "), " +
           std::to_string(iterations) + (inputs.size() == 2 ? " passes" : " rounds") +
           (converged ? "" : ", stopped by --align-iter before converging"));
  for (std::size_t k = 0; k < inputs.size(); ++k)
    for (const std::string& line : describe_groups(out.spec, perms[k]))
      note(v, 1, "input " + std::to_string(k + 1) + ": " + line);
  for (std::size_t k = 0; k < inputs.size(); ++k)
    out.readers.push_back(align::permuted_reader(*inputs[k], out.spec, perms[k]));
  return out;
}

void check_aligned_plan(const Plan& plan, const Aligned& aligned) {
  for (const PlanEntry& e : plan.entries)
    if (aligned.spec.tensors[e.source[0]].permuted() && e.action != Action::average)
      fail_usage(e.info.name + " is permuted by the alignment but would not be averaged");
}

}  // namespace wavg::cli
