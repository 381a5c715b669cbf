// Which combinations of federated options wavg accepts, and why it refuses the others. Every refusal is a usage
// error (exit 2) whose message gives the reason, so the user learns what to change.

#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "wavg/error.hpp"
#include "wavg/federated.hpp"
#include "wavg/method_spec.hpp"
#include "wavg/task_methods.hpp"

namespace wavg {

namespace {

void need_inputs(std::size_t inputs, std::size_t least, const std::string& why) {
  if (inputs < least)
    fail_usage(why + " needs at least " + std::to_string(least) + " inputs, got " + std::to_string(inputs));
}

void check_finite(const char* option, double v, double lo, bool lo_open, double hi, bool hi_open) {
  const bool ok = std::isfinite(v) && (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
  if (!ok) fail_usage(std::string(option) + " " + std::to_string(v) + " is out of range");
}

// The options each robust method takes, needs and their ranges are its row's parameters; what relates them to the
// number of inputs is checked here.
void validate_robust(const FederatedOptions& o, std::size_t n) {
  const RobustOptions& r = o.robust;
  const MethodSpec& row = *r.method;
  const std::string m = "--method " + std::string(row.name);
  struct Given {
    std::string_view option;
    bool given;
    std::optional<double> value;
  };
  // --gm-* always hold a value (their defaults): they are checked, not refused.
  const Given given[]{{"--trim", r.trim.has_value(), r.trim},  {"--byzantine", r.byzantine.has_value(), {}},
                      {"--select", r.select.has_value(), {}},  {"--gm-tol", false, r.gm_tol},
                      {"--gm-max-iter", false, r.gm_max_iter}, {"--gm-eps", false, r.gm_eps}};
  for (const Given& g : given)
    if (g.given && !find_option(row, g.option))
      fail_usage(std::string(g.option) + " only applies to --method " + methods_taking(g.option, " and "));
  for (const ParamSpec& p : row.params)
    for (const Given& g : given)
      if (g.option == p.option && p.need == Need::option && !g.given)
        fail_usage(m + " needs " + std::string(p.option) + " " + std::string(p.usage));
  for (const Given& g : given)
    if (const ParamSpec* p = find_option(row, g.option); p && g.value)
      if (const std::string problem = range_problem(*p, g.option, *g.value); !problem.empty()) fail_usage(problem);
  if (!o.weights.empty() && !row.unweighted.empty()) fail_usage(m + " " + std::string(row.unweighted));
  if (r.trim) {
    const std::uint32_t k = trim_count(*r.trim, n);
    need_inputs(n, 2 * std::size_t{k} + 1, m + " --trim " + std::to_string(*r.trim));
  }
  if (r.byzantine) {
    if (*r.byzantine < 0) fail_usage("--byzantine must not be negative");
    const auto f = static_cast<std::size_t>(*r.byzantine);
    need_inputs(n, 2 * f + 3, m + " with --byzantine " + std::to_string(f) + " (n > 2F + 2)");
    if (r.select && (*r.select < 1 || static_cast<std::size_t>(*r.select) > n - f))
      fail_usage("--select must be between 1 and n - F = " + std::to_string(n - f));
  }
  WAVG_ASSERT(row.family == Family::federated);
}

void validate_privacy(const FederatedOptions& o, std::size_t) {
  const PrivacyOptions& p = o.privacy;
  if (p.clip != 0) {
    check_finite("--clip", p.clip, 0, true, HUGE_VAL, true);
    if (!o.has_base && o.inputs == InputKind::models)
      fail_usage(
          "--clip clips updates (client - global): give the global model with --base, or use "
          "--inputs-are deltas");
  }
  if (p.noise_multiplier != 0) {
    check_finite("--noise-multiplier", p.noise_multiplier, 0, true, HUGE_VAL, true);
    if (p.clip == 0) fail_usage("--noise-multiplier needs --clip: the noise is scaled to the clipping norm");
    if (o.robust.method != &default_method())
      fail_usage("--noise-multiplier is calibrated for the mean (sensitivity C/n) and cannot be used with --method " +
                 std::string(o.robust.method->name));
    if (!o.weights.empty())
      fail_usage("--noise-multiplier is calibrated for the unweighted mean (sensitivity C/n); drop the weights");
  }
}

// --staleness and --mix: FedAsync's rule, a weighted mean of updates and an SGD server step of alpha.
void validate_async(FederatedOptions& o) {
  if (o.staleness_fn) {
    if (!o.has_base) fail_usage("--staleness counts rounds behind the global model: give it with --base");
    if (o.robust.method != &default_method()) fail_usage("--staleness weights the mean: drop --method");
  }
  if (!o.mix) return;
  if (!o.has_base) fail_usage("--mix scales the step added to the global model: give it with --base");
  if (o.server.kind != ServerOptKind::none) fail_usage("--mix is an SGD server step of --mix: drop --server-opt");
  check_finite("--mix", *o.mix, 0, true, 1, false);
  o.server.kind = ServerOptKind::sgd;
  o.server_lr = o.mix;
}

void validate_server(FederatedOptions& o) {
  ServerStepParams& s = o.server;
  const bool adaptive =
      s.kind == ServerOptKind::adam || s.kind == ServerOptKind::yogi || s.kind == ServerOptKind::adagrad;
  if (s.kind == ServerOptKind::none) {
    if (o.server_lr || o.beta1 || o.beta2 || o.tau)
      fail_usage("--server-lr, --beta1, --beta2 and --tau need --server-opt");
    if (o.has_state) fail_usage("--state holds a server optimizer's moments and needs --server-opt");
    return;
  }
  if (!o.has_base) fail_usage("--server-opt applies the update to the global model: give it with --base");
  if ((o.beta2 || o.tau) && !adaptive) fail_usage("--beta2 and --tau only apply to adam, yogi and adagrad");
  if (o.beta1 && s.kind == ServerOptKind::sgd) fail_usage("--beta1 does not apply to --server-opt sgd");
  s.lr = o.server_lr.value_or(adaptive ? 1e-2 : 1.0);
  s.beta1 = o.beta1.value_or(0.9);
  s.beta2 = o.beta2.value_or(0.99);
  s.tau = o.tau.value_or(1e-3);
  check_finite("--server-lr", s.lr, 0, true, HUGE_VAL, true);
  check_finite("--beta1", s.beta1, 0, false, 1, true);
  check_finite("--beta2", s.beta2, 0, false, 1, true);
  check_finite("--tau", s.tau, 0, true, HUGE_VAL, true);
}

}  // namespace

bool is_federated(const FederatedOptions& o) {
  return o.has_base || o.inputs == InputKind::deltas || o.robust.method != &default_method() || o.privacy.clip != 0 ||
         o.privacy.noise_multiplier != 0 || o.server.kind != ServerOptKind::none || o.has_state || o.robust.trim ||
         o.robust.byzantine || o.robust.select || o.server_lr || o.beta1 || o.beta2 || o.tau || o.staleness_fn || o.mix;
}

void validate_federated(FederatedOptions& o, std::size_t inputs) {
  validate_robust(o, inputs);
  validate_privacy(o, inputs);
  validate_async(o);
  validate_server(o);
}

}  // namespace wavg
