// Which options the task-vector methods accept, and why they refuse the others. Every refusal is a usage error
// (exit 2) whose message gives the reason.

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "wavg/error.hpp"
#include "wavg/method_spec.hpp"
#include "wavg/task_methods.hpp"

namespace wavg {

bool is_task_method(const MethodSpec& m) { return m.family != Family::federated; }

namespace {

// One option merge was given for a task-vector method that is no numeric parameter.
struct Given {
  std::string_view option;
  bool given;
};

std::string count_text(std::size_t n) { return n == 2 ? "two" : std::to_string(n); }

}  // namespace

const MethodSpec& task_row(const TaskOptions& o) { return o.linear ? *find_mergekit_method("linear") : *o.method; }

std::string parameter_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void validate_task(const TaskOptions& o, const FederatedOptions& f, std::size_t inputs) {
  const MethodSpec& row = task_row(o);
  const std::string m(row.linear ? row.mergekit : row.name);
  if (f.inputs == InputKind::deltas || f.privacy.clip != 0 || f.privacy.noise_multiplier != 0 ||
      f.server.kind != ServerOptKind::none || f.has_state || f.robust.trim || f.robust.byzantine || f.robust.select ||
      f.server_lr || f.beta1 || f.beta2 || f.tau)
    fail_usage("--method " + m +
               " takes none of the federated options (--inputs-are, --clip, --noise-multiplier, "
               "--server-opt, --state, --trim, --byzantine, --select)");
  // The numeric parameters by their key; the switches and the weights, which have no range.
  for (const auto& [key, value] : o.params)
    if (const ParamSpec* p = find_param(row, key); !p || p->option.empty())
      fail_usage(std::string(option_named(key)) + " does not apply to --method " + m);
  const Given switches[]{
      {"--rescale", o.rescale.has_value()},
      {"--weights", !o.weights.empty()},
      {"--normalize", o.normalize.has_value()},
  };
  for (const Given& g : switches)
    if (g.given && !find_option(row, g.option)) fail_usage(std::string(g.option) + " does not apply to --method " + m);
  // della's own rule on epsilon and the density's band comes before the ranges, for a density in its range. A
  // recipe's values may differ per tensor: the method checks each tensor's.
  const std::optional<double> density = o.param("density");
  if (row.ranked_keep && density && range_problem(*find_param(row, "density"), {}, *density).empty() && !o.values)
    if (const std::string p = della_problem(*density, o.param("epsilon").value_or(k_della_epsilon)); !p.empty())
      fail_usage(p);
  for (const auto& [key, value] : o.params) {
    const ParamSpec& p = *find_param(row, key);
    if (const std::string problem = range_problem(p, p.option, value); !problem.empty()) fail_usage(problem);
  }
  if (row.ranked_keep && o.rescale == DareRescale::inverse_density)
    fail_usage("--rescale inverse-density does not apply to --method " + m +
               " (its keep probability differs per entry): l1 or none");
  if (!o.weights.empty() && o.weights.size() != inputs)
    fail_usage("--weights has " + std::to_string(o.weights.size()) + " values for " + std::to_string(inputs) +
               " inputs");
  // Negative weights subtract a task vector (task negation). A recipe's weights may differ per tensor: the method
  // checks each tensor's with the same rule (check_tensor_weights).
  if (!o.values)
    if (const std::string p = weights_problem(row, o.weights, o.normalize.value_or(row.normalize_default)); !p.empty())
      fail_usage("--weights: " + p);
  if (row.base == BaseUse::required && !o.has_base)
    fail_usage("--method " + m + " works on task vectors (input - base): give the base with --base");
  if (row.base == BaseUse::none && o.has_base)
    fail_usage("--method " + m + " " +
               std::string(row.without_base.empty() ? "works on the models themselves" : row.without_base) +
               " and takes no --base");
  if (row.max_inputs == row.min_inputs && inputs != row.min_inputs)
    fail_usage("--method " + m + " needs exactly " +
               (row.min_inputs == 1 ? std::string("one input") : count_text(row.min_inputs) + " inputs") +
               (row.base == BaseUse::required ? " besides --base" : "") + ", got " + std::to_string(inputs));
  if (inputs < row.min_inputs)
    fail_usage("--method " + m + " needs at least " + count_text(row.min_inputs) + " inputs" +
               (row.base == BaseUse::required ? " besides --base" : "") + ", got " + std::to_string(inputs));
  // A recipe gives its own required values (TensorValues::required, mergekit's defaults).
  for (const ParamSpec& p : row.params)
    if ((p.need == Need::option || p.need == Need::always) && !p.option.empty() && !o.values)
      if (p.key == "weight" ? o.weights.empty() : !o.params.count(p.key))
        fail_usage("--method " + m + " needs " + std::string(p.option) + " " + std::string(p.usage));
}

std::string describe_common(const TaskOptions& o) {
  std::string s = ", lambda " + parameter_text(o.param("lambda").value_or(1.0));
  if (o.normalize) s += *o.normalize ? ", normalize" : ", no normalize";
  if (!o.weights.empty()) {
    s += ", weights ";
    for (std::size_t k = 0; k < o.weights.size(); ++k) {
      if (k) s += ',';
      s += parameter_text(o.weights[k]);
    }
  }
  if (o.values) s += ", per-tensor values from the recipe";
  return s + (o.has_base ? ", on task vectors" : "");
}

std::string della_problem(double density, double epsilon) {
  if (!(epsilon >= 0 && epsilon < 1)) return "epsilon " + parameter_text(epsilon) + " is not in [0, 1)";
  // mergekit's della_magprune refuses the same (keep probabilities must stay inside (0, 1)); density 1 keeps all.
  if (density < 1 && !(density - epsilon > 0 && density + epsilon < 1))
    return "della needs density - epsilon > 0 and density + epsilon < 1, got density " + parameter_text(density) +
           " and epsilon " + parameter_text(epsilon);
  return {};
}

std::unique_ptr<Method> make_task_method(Backend& backend, const Plan& plan, const TaskOptions& options) {
  const FederatedOptions none;
  return task_row(options).make({backend, plan, none, &options, nullptr});
}

}  // namespace wavg
