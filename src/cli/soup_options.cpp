#include "cli/soup_options.hpp"

#include "wavg/method_spec.hpp"

namespace wavg::cli {

namespace {

// The heading lists the methods these options serve: the rows outside the federated family.
std::string task_heading() {
  std::string names;
  for (const MethodSpec& m : method_specs())
    if (m.family != Family::federated && !m.name.empty()) names += (names.empty() ? "" : ", ") + std::string(m.name);
  return "Task vectors (--method " + names + ")";
}

// "ties, dare-linear: " before an option's help: the methods whose rows take it.
std::string taking(std::string_view option) { return methods_taking(option); }

// --normalize: the task-vector methods divide their combined vector, multislerp its weights; the defaults are the
// rows'.
std::string normalize_help() {
  std::string vectors, yes, weights;
  for (const MethodSpec& m : method_specs()) {
    if (m.name.empty() || !m.takes_normalize) continue;
    std::string& list = m.family == Family::task_vectors ? vectors : weights;
    list += (list.empty() ? "" : ", ") + std::string(m.name);
    if (m.family == Family::task_vectors && m.normalize_default)
      yes += (yes.empty() ? "" : " and ") + std::string(m.name);
  }
  return vectors + ": divide the combined task vector by the sum of the (sign-agreeing) weights (default: " + yes +
         " yes, the others no); " + weights + ": divide the weights by their sum (default yes)";
}

}  // namespace

TaskOptions TaskCli::resolve(const FederatedOptions& fed, std::vector<double> weights) const {
  TaskOptions o;
  o.method = fed.robust.method;
  o.weights = std::move(weights);
  o.lambda = lambda;
  o.density = density;
  o.gamma = gamma;
  o.epsilon = epsilon;
  o.t = t;
  o.max_iter = max_iter;
  o.tol = tol;
  o.rescale = rescale;
  o.normalize = normalize;
  o.values = values;
  o.linear = linear;
  o.seed = fed.privacy.seed;
  o.has_base = fed.has_base;
  return o;
}

void add_task_options(CLI::App& app, TaskCli& t) {
  const std::string k_task = task_heading();
  app.add_option("--lambda", t.lambda, taking("--lambda") + ": scale of the combined task vector (default 1)")
      ->group(k_task);
  app.add_option("--density", t.density, taking("--density") + ": fraction of each task vector kept, in (0, 1]")
      ->group(k_task);
  app.add_option(
         "--gamma", t.gamma,
         taking("--gamma") + ": fraction of each task vector's largest entries dropped, in [0, 1] (default 0.01)")
      ->group(k_task);
  app.add_option("--epsilon", t.epsilon,
                 taking("--epsilon") +
                     ": keep probabilities run from density - epsilon (a row's smallest magnitude) to density + "
                     "epsilon (its largest) (default 0.15)")
      ->group(k_task);
  app.add_option("--t", t.t, taking("--t") + ": position between input 1 (0) and input 2 (1)")->group(k_task);
  app.add_option("--karcher-max-iter", t.max_iter, taking("--karcher-max-iter") + ": most tangent steps (default 10)")
      ->group(k_task);
  app.add_option("--karcher-tol", t.tol,
                 taking("--karcher-tol") + ": norm below which a step or an input counts as zero (default 1e-5)")
      ->group(k_task);
  add_choice(app, "--rescale", t.rescale, k_dare_rescale_names,
             taking("--rescale") +
                 ": rescale of the kept entries: l1 (each tensor by |tau|_1 / |masked tau|_1, mergekit >= 0.1; "
                 "the default), inverse-density (1/density, the DARE paper) or none")
      ->group(k_task);
  app.add_flag_function(
         "--normalize,!--no-normalize", [&t](std::int64_t n) { t.normalize = n > 0; }, normalize_help())
      ->group(k_task);
}

}  // namespace wavg::cli
