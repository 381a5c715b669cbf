// Which options the task-vector methods accept, and why they refuse the others. Every refusal is a usage error
// (exit 2) whose message gives the reason.

#include <cmath>
#include <cstdio>
#include <string>

#include "wavg/error.hpp"
#include "wavg/method_spec.hpp"
#include "wavg/task_methods.hpp"

namespace wavg {

bool is_task_method(Aggregator a) {
  switch (a) {
    case Aggregator::task_arithmetic:
    case Aggregator::ties:
    case Aggregator::dare_linear:
    case Aggregator::dare_ties:
    case Aggregator::slerp:
    case Aggregator::model_stock:
    case Aggregator::nuslerp:
    case Aggregator::multislerp:
    case Aggregator::karcher:
    case Aggregator::breadcrumbs:
    case Aggregator::breadcrumbs_ties:
    case Aggregator::della:
    case Aggregator::della_linear: return true;
    default: return false;
  }
}

namespace {

void refuse_if(bool given, const std::string& option, const std::string& method) {
  if (given) fail_usage(option + " does not apply to --method " + method);
}

}  // namespace

std::string parameter_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void validate_task(const TaskOptions& o, const FederatedOptions& f, std::size_t inputs) {
  const std::string m(name_of(k_aggregator_names, o.method));
  const bool crumbs = o.method == Aggregator::breadcrumbs || o.method == Aggregator::breadcrumbs_ties;
  const bool della = o.method == Aggregator::della || o.method == Aggregator::della_linear;
  const bool sparsifies = o.method == Aggregator::ties || o.method == Aggregator::dare_linear ||
                          o.method == Aggregator::dare_ties || crumbs || della;
  const bool dare = o.method == Aggregator::dare_linear || o.method == Aggregator::dare_ties;
  const bool on_vectors = sparsifies || o.method == Aggregator::task_arithmetic;
  if (f.inputs == InputKind::deltas || f.privacy.clip != 0 || f.privacy.noise_multiplier != 0 ||
      f.server.kind != ServerOptKind::none || f.has_state || f.robust.trim || f.robust.byzantine || f.robust.select ||
      f.server_lr || f.beta1 || f.beta2 || f.tau)
    fail_usage("--method " + m +
               " takes none of the federated options (--inputs-are, --clip, --noise-multiplier, "
               "--server-opt, --state, --trim, --byzantine, --select)");
  refuse_if(o.density.has_value() && !sparsifies, "--density", m);
  refuse_if(o.seed.has_value() && !dare && !della, "--seed", m);
  refuse_if(o.epsilon.has_value() && !della, "--epsilon", m);
  refuse_if(o.gamma.has_value() && !crumbs, "--gamma", m);
  refuse_if(o.max_iter.has_value() && o.method != Aggregator::karcher, "--karcher-max-iter", m);
  refuse_if(o.tol.has_value() && o.method != Aggregator::karcher, "--karcher-tol", m);
  if (o.max_iter && (*o.max_iter < 0 || *o.max_iter > 1'000'000))
    fail_usage("--karcher-max-iter " + std::to_string(*o.max_iter) + " is not in [0, 1000000]");
  if (o.tol && !(*o.tol >= 0 && *o.tol <= 1))
    fail_usage("--karcher-tol " + parameter_text(*o.tol) + " is not in [0, 1]");
  if (o.gamma && !(*o.gamma >= 0 && *o.gamma <= 1))
    fail_usage("--gamma " + parameter_text(*o.gamma) + " is not in [0, 1]");
  refuse_if(o.rescale.has_value() && !dare && !della, "--rescale", m);
  if (della && o.rescale == DareRescale::inverse_density)
    fail_usage("--rescale inverse-density does not apply to --method " + m +
               " (its keep probability differs per entry): l1 or none");
  refuse_if(o.t.has_value() && o.method != Aggregator::slerp, "--t", m);
  refuse_if(o.lambda.has_value() && !on_vectors, "--lambda", m);
  const bool spherical = o.method == Aggregator::nuslerp || o.method == Aggregator::multislerp;
  refuse_if(!o.weights.empty() && !on_vectors && !spherical, "--weights", m);
  if (!o.weights.empty() && o.weights.size() != inputs)
    fail_usage("--weights has " + std::to_string(o.weights.size()) + " values for " + std::to_string(inputs) +
               " inputs");
  // Negative weights subtract a task vector (task negation). A recipe's weights may differ per tensor: the method
  // checks each tensor's with the same rule (check_tensor_weights).
  const MethodSpec& spec = method_spec(o.method);
  if (!o.values)
    if (const std::string p = weights_problem(spec, o.weights, o.normalize.value_or(spec.normalize_default));
        !p.empty())
      fail_usage("--weights: " + p);
  if (o.lambda && !std::isfinite(*o.lambda)) fail_usage("--lambda " + parameter_text(*o.lambda) + " is not finite");
  refuse_if(o.normalize.has_value() && !on_vectors && o.method != Aggregator::multislerp, "--normalize", m);
  if ((on_vectors && !o.linear) || o.method == Aggregator::model_stock) {
    if (!o.has_base) fail_usage("--method " + m + " works on task vectors (input - base): give the base with --base");
  }
  if (sparsifies) {
    if (!o.density) fail_usage("--method " + m + " needs --density D (the fraction of each task vector kept)");
    if (!(*o.density > 0 && *o.density <= 1))
      fail_usage("--density " + parameter_text(*o.density) + " is not in (0, 1]");
  }
  // A recipe's values may differ per tensor: the method checks each tensor's.
  if (della && !o.values)
    if (const std::string p = della_problem(*o.density, o.epsilon.value_or(k_della_epsilon)); !p.empty()) fail_usage(p);
  if (o.method == Aggregator::slerp) {
    if (o.has_base) fail_usage("--method slerp interpolates between two models and takes no --base");
    if (inputs != 2) fail_usage("--method slerp needs exactly two inputs, got " + std::to_string(inputs));
    if (!o.t) fail_usage("--method slerp needs --t T (0 gives input 1, 1 gives input 2)");
    if (!(*o.t >= 0 && *o.t <= 1)) fail_usage("--t " + parameter_text(*o.t) + " is not in [0, 1]");
  }
  if (o.method == Aggregator::nuslerp) {  // mergekit's weight is required: t = w2 / (w1 + w2)
    if (inputs != 2) fail_usage("--method nuslerp needs exactly two inputs, got " + std::to_string(inputs));
    if (o.weights.empty() && !o.values) fail_usage("--method nuslerp needs --weights W1,W2 (t = W2 / (W1 + W2))");
  }
  if (o.method == Aggregator::karcher && o.has_base)
    fail_usage("--method karcher averages the models themselves and takes no --base");
  if (o.method == Aggregator::model_stock && inputs < 2)
    fail_usage("--method model-stock needs at least two inputs besides --base, got " + std::to_string(inputs));
}

std::string describe_common(const TaskOptions& o) {
  std::string s = ", lambda " + parameter_text(o.lambda.value_or(1.0));
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
  if (options.method == Aggregator::della || options.method == Aggregator::della_linear)
    return make_della(backend, plan, options);
  if (options.method == Aggregator::slerp || options.method == Aggregator::model_stock ||
      options.method == Aggregator::nuslerp || options.method == Aggregator::multislerp ||
      options.method == Aggregator::karcher)
    return make_slerp_stock(backend, plan, options);
  return make_task_vectors(backend, plan, options);
}

}  // namespace wavg
