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
  o.params = params;
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
  for (const ParamSpec* p : option_params()) {
    const std::string option(p->option), help = taking(p->option) + ": " + std::string(p->help);
    const auto set = [&t, key = std::string(p->key)](auto v) { t.params[key] = static_cast<double>(v); };
    CLI::Option* added = p->whole ? app.add_option_function<int>(option, set, help)
                                  : app.add_option_function<double>(option, set, help);
    added->group(k_task);
  }
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
