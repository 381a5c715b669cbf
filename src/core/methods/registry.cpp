// The method table (method_spec.hpp): one row per --method. A row is all the rest of the program knows about a
// method; its formulas live in the method's own file.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "wavg/error.hpp"
#include "wavg/method_spec.hpp"
#include "wavg/task_methods.hpp"

namespace wavg {

namespace {

constexpr double k_inf = std::numeric_limits<double>::infinity();

constexpr ParamSpec param(std::string_view key, std::string_view option, Scope scope = Scope::global,
                          Need need = Need::optional) {
  ParamSpec p;
  p.key = key, p.option = option, p.scope = scope, p.need = need;
  return p;
}

// A parameter with a range [lo, hi] (ends excluded where open) and, where given, mergekit's default.
constexpr ParamSpec ranged(std::string_view key, std::string_view option, Scope scope, Need need, double lo,
                           bool lo_open, double hi, bool hi_open) {
  ParamSpec p = param(key, option, scope, need);
  p.lo = lo, p.hi = hi, p.lo_open = lo_open, p.hi_open = hi_open, p.ranged = true;
  return p;
}
constexpr ParamSpec with_default(ParamSpec p, double fallback) {
  p.fallback = fallback, p.has_fallback = true;
  return p;
}
constexpr ParamSpec with_usage(ParamSpec p, std::string_view usage) {
  p.usage = usage;
  return p;
}
// merge's --help for the parameter's option (after the names of the methods taking it).
constexpr ParamSpec with_help(ParamSpec p, std::string_view help) {
  p.help = help;
  return p;
}
// A switch a recipe sets to true or false for the whole merge.
constexpr ParamSpec flag(std::string_view key, std::string_view option = {}) {
  ParamSpec p = param(key, option);
  p.flag = true;
  return p;
}

// mergekit's weight has no default: a recipe gives one per model; merge's --weights defaults to 1 each.
constexpr ParamSpec k_weight = param("weight", "--weights", Scope::per_model, Need::recipe);
constexpr ParamSpec k_lambda =
    with_help(with_default(ranged("lambda", "--lambda", Scope::global, Need::optional, -k_inf, true, k_inf, true), 1),
              "scale of the combined task vector (default 1)");
// Merge's --density is required (a sparsifying method without it is a mistake); a recipe keeps mergekit's 1.
constexpr ParamSpec k_density = with_help(
    with_usage(with_default(ranged("density", "--density", Scope::per_model, Need::option, 0, true, 1, false), 1),
               "D (the fraction of each task vector kept)"),
    "fraction of each task vector kept, in (0, 1]");
constexpr ParamSpec k_gamma =
    with_help(with_default(ranged("gamma", "--gamma", Scope::per_model, Need::optional, 0, false, 1, false), 0.01),
              "fraction of each task vector's largest entries dropped, in [0, 1] (default 0.01)");
constexpr ParamSpec k_epsilon = with_help(
    with_default(ranged("epsilon", "--epsilon", Scope::per_model, Need::optional, 0, false, 1, true), k_della_epsilon),
    "keep probabilities run from density - epsilon (a row's smallest magnitude) to density + epsilon (its largest) "
    "(default 0.15)");
// slerp's t outside [0, 1] extrapolates along the arc (mergekit's formula, unchanged).
constexpr ParamSpec k_t = with_help(
    with_usage(ranged("t", "--t", Scope::global, Need::always, -k_inf, true, k_inf, true),
               "T (0 gives input 1, 1 gives input 2)"),
    "slerp: position between input 1 (0) and input 2 (1), extrapolated outside [0, 1]; nearswap: the distance "
    "|base - input| at or below which an entry takes the input's value");
constexpr ParamSpec whole(ParamSpec p) {
  p.whole = true;
  return p;
}
constexpr ParamSpec k_max_iter = with_help(
    whole(with_default(ranged("max_iter", "--karcher-max-iter", Scope::global, Need::optional, 0, false, 1e6, false),
                       10)),
    "most tangent steps (default 10)");
constexpr ParamSpec k_tol =
    with_help(with_default(ranged("tol", "--karcher-tol", Scope::global, Need::optional, 0, false, 1, false), 1e-5),
              "norm below which a step or an input counts as zero (default 1e-5)");
constexpr ParamSpec k_normalize = flag("normalize", "--normalize");
constexpr ParamSpec k_rescale = flag("rescale", "--rescale");
constexpr ParamSpec runs_only(ParamSpec p, bool value, std::string_view unsupported = {}) {
  p.runs_only = value;
  p.unsupported = unsupported;
  return p;
}
constexpr ParamSpec k_rescale_false =
    runs_only(flag("rescale"), false, "an L1 rescale of the magnitude-trimmed task vectors");
constexpr ParamSpec k_seed = param("", "--seed");     // merge only: mergekit draws its own
constexpr ParamSpec k_int8_mask = flag("int8_mask");  // mergekit's memory saving: no effect on the values

constexpr ParamSpec k_task_arithmetic[]{k_weight, k_lambda, k_normalize, k_int8_mask};
constexpr ParamSpec k_linear[]{k_weight, k_normalize};
constexpr ParamSpec k_ties[]{k_weight, k_density, k_lambda, k_normalize, k_rescale_false, k_int8_mask};
constexpr ParamSpec k_dare[]{k_weight, k_density, k_lambda, k_normalize, k_rescale, k_int8_mask, k_seed};
constexpr ParamSpec k_crumbs[]{k_weight, k_density, k_gamma, k_lambda, k_normalize, k_rescale_false, k_int8_mask};
constexpr ParamSpec k_della[]{k_weight, k_density, k_epsilon, k_lambda, k_normalize, k_rescale, k_int8_mask, k_seed};
constexpr ParamSpec k_slerp[]{k_t};
constexpr ParamSpec k_stock[]{flag("filter_wise")};  // a t per row: slerp_stock.cpp
// nuslerp's t = w2 / (w1 + w2): merge needs the weights too.
constexpr ParamSpec k_nuslerp[]{
    with_usage(param("weight", "--weights", Scope::per_model, Need::always), "W1,W2 (t = W2 / (W1 + W2))"),
    runs_only(flag("nuslerp_flatten"), true, "an angle per row or column"),
    runs_only(flag("nuslerp_row_wise"), false, "it applies only with nuslerp_flatten: false")};
constexpr ParamSpec k_multislerp[]{k_weight, flag("normalize_weights", "--normalize")};
constexpr ParamSpec k_karcher[]{k_max_iter, k_tol};
constexpr ParamSpec k_sce[]{
    with_help(
        with_default(ranged("select_topk", "--select-topk", Scope::global, Need::optional, 0, false, 1, false), 1),
        "fraction of the entries kept, those where the task vectors' variance is largest, in [0, 1] (default 1)"),
    k_int8_mask};
// nearswap's t: the help is slerp's --t's, which names both.
constexpr ParamSpec k_nearswap[]{
    with_usage(ranged("t", "--t", Scope::global, Need::always, 0, false, k_inf, true), "T (the distance that swaps)")};
// The robust aggregators' options (merge only: mergekit has no such methods). The relations between them and the
// number of inputs (n > 2F + 2, M <= n - F, n > 2 trim) are checked in federated_options.cpp.
constexpr ParamSpec k_trim_param = with_usage(ranged("", "--trim", Scope::global, Need::option, 0, false, 0.5, true),
                                              "(the fraction cut at each end)");
constexpr ParamSpec k_byzantine =
    with_usage(param("", "--byzantine", Scope::global, Need::option), "F (the number of inputs that may be corrupted)");
constexpr ParamSpec k_trimmed_mean[]{k_trim_param};
constexpr ParamSpec k_krum[]{k_byzantine};
constexpr ParamSpec k_multi_krum[]{
    k_byzantine, with_usage(param("", "--select", Scope::global, Need::option), "M (how many inputs to average)")};
constexpr ParamSpec k_geometric_median[]{
    with_default(ranged("", "--gm-tol", Scope::global, Need::optional, 0, false, 1, true), 1e-6),
    with_default(ranged("", "--gm-max-iter", Scope::global, Need::optional, 1, false, 2147483647, false), 100),
    with_default(ranged("", "--gm-eps", Scope::global, Need::optional, 0, true, k_inf, true), 1e-8)};

std::unique_ptr<Method> make_federated_row(const MethodArgs& a) {
  return make_federated(a.backend, a.plan, a.federated, a.state);
}

}  // namespace

// Each method file defines its maker; the rows below are the only callers.
std::unique_ptr<Method> make_task_vectors(const MethodArgs&);  // task_vectors.cpp
std::unique_ptr<Method> make_della(const MethodArgs&);         // della.cpp
std::unique_ptr<Method> make_slerp_stock(const MethodArgs&);   // slerp_stock.cpp
std::unique_ptr<Method> make_nearswap(const MethodArgs&);      // nearswap.cpp
std::unique_ptr<Method> make_sce(const MethodArgs&);           // sce.cpp
std::unique_ptr<Method> make_arcee_fusion(const MethodArgs&);  // arcee_fusion.cpp

namespace {

MethodSpec row(std::string_view name, std::string_view mergekit, Family family) {
  MethodSpec s;
  s.name = name;
  s.mergekit = mergekit;
  s.family = family;
  return s;
}

MethodSpec federated(std::string_view name, Reduce reduce, std::size_t min_inputs,
                     std::span<const ParamSpec> params = {}, std::string_view unweighted = {}) {
  MethodSpec s = row(name, {}, Family::federated);
  s.reduce = reduce;
  s.params = params;
  s.weights = WeightRule::convex;
  s.unweighted = unweighted;
  s.base = BaseUse::optional;
  s.min_inputs = min_inputs;
  s.make = make_federated_row;
  return s;
}

MethodSpec task(std::string_view name, std::string_view mergekit, std::span<const ParamSpec> params, Sparsify sparsify,
                Consensus consensus, bool normalize_default) {
  MethodSpec s = row(name, mergekit, Family::task_vectors);
  s.sparsify = sparsify;
  s.consensus = consensus;
  s.rescales = sparsify == Sparsify::random;
  s.normalize_default = normalize_default;
  s.takes_normalize = true;
  s.params = params;
  s.weights = WeightRule::signed_;
  s.base = BaseUse::required;
  s.make = make_task_vectors;
  return s;
}

// A method whose maker is given: its parameters, base and inputs (weights none).
MethodSpec made(std::string_view name, std::string_view mergekit, Family family, std::span<const ParamSpec> params,
                BaseUse base, std::size_t min_inputs, std::size_t max_inputs, MethodMaker make) {
  MethodSpec s = row(name, mergekit, family);
  s.params = params;
  s.base = base;
  s.min_inputs = min_inputs;
  s.max_inputs = max_inputs;
  s.make = make;
  return s;
}

MethodSpec spherical(std::string_view name, std::string_view mergekit, Sphere sphere, std::span<const ParamSpec> params,
                     WeightRule weights, BaseUse base, std::size_t min_inputs, std::size_t max_inputs,
                     std::string_view without_base = {}) {
  MethodSpec s = made(name, mergekit, Family::spherical, params, base, min_inputs, max_inputs, make_slerp_stock);
  s.sphere = sphere;
  s.weights = weights;
  s.without_base = without_base;
  return s;
}

// A method of its own file (Family::standalone).
MethodSpec standalone(std::string_view name, std::string_view mergekit, std::span<const ParamSpec> params, BaseUse base,
                      std::size_t min_inputs, std::size_t max_inputs, MethodMaker make) {
  return made(name, mergekit, Family::standalone, params, base, min_inputs, max_inputs, make);
}

// multislerp divides its weights by their sum unless told not to (normalize_weights).
MethodSpec multislerp() {
  MethodSpec s = spherical("multislerp", "multislerp", Sphere::multislerp, k_multislerp, WeightRule::signed_,
                           BaseUse::optional, 1, 0);
  s.normalize_default = true;
  s.takes_normalize = true;
  return s;
}

MethodSpec slerp() {
  MethodSpec s = spherical("slerp", "slerp", Sphere::slerp, k_slerp, WeightRule::none, BaseUse::none, 2, 2,
                           "interpolates between two models");
  s.base_first = true;
  return s;
}

// mergekit's linear, the weighted sum of the models (normalised by default): task arithmetic without a base.
MethodSpec linear() {
  MethodSpec s = task({}, "linear", k_linear, Sparsify::none, Consensus::none, true);
  s.linear = true;
  s.base = BaseUse::none;
  return s;
}

MethodSpec della(std::string_view name, std::string_view mergekit, Consensus consensus) {
  // mergekit normalises della by the agreeing weights by default, della_linear not.
  MethodSpec s = task(name, mergekit, k_della, Sparsify::random, consensus, consensus == Consensus::sign);
  s.ranked_keep = true;
  s.make = make_della;
  return s;
}

// The first row is --method's default.
const std::vector<MethodSpec>& rows() {
  static const std::vector<MethodSpec> table{
      federated("mean", Reduce::mean, 1),
      federated("median", Reduce::median, 1),
      federated("trimmed-mean", Reduce::trimmed_mean, 1, k_trimmed_mean,
                "cuts a number of inputs at each end and cannot honour per-input weights; use --method median or "
                "geometric-median for weighted robust aggregation"),
      federated("krum", Reduce::krum, 3, k_krum,
                "returns one input and cannot honour per-input weights; use --method multi-krum, whose average of "
                "the selected inputs is weighted"),
      federated("multi-krum", Reduce::krum, 3, k_multi_krum),
      federated("geometric-median", Reduce::geometric_median, 1, k_geometric_median),
      task("task-arithmetic", "task_arithmetic", k_task_arithmetic, Sparsify::none, Consensus::none, false),
      // mergekit normalises TIES by the weights that agree with the sign, and neither DARE nor breadcrumbs variant.
      task("ties", "ties", k_ties, Sparsify::magnitude, Consensus::sign, true),
      task("dare-linear", "dare_linear", k_dare, Sparsify::random, Consensus::none, false),
      task("dare-ties", "dare_ties", k_dare, Sparsify::random, Consensus::sign, false),
      linear(),
      slerp(),
      spherical("model-stock", "model_stock", Sphere::model_stock, k_stock, WeightRule::none, BaseUse::required, 2, 0),
      spherical("nuslerp", "nuslerp", Sphere::nuslerp, k_nuslerp, WeightRule::signed_, BaseUse::optional, 2, 2),
      multislerp(),
      spherical("karcher", "karcher", Sphere::karcher, k_karcher, WeightRule::none, BaseUse::none, 1, 0,
                "averages the models themselves"),
      task("breadcrumbs", "breadcrumbs", k_crumbs, Sparsify::magnitude, Consensus::none, false),
      task("breadcrumbs-ties", "breadcrumbs_ties", k_crumbs, Sparsify::magnitude, Consensus::sign, false),
      della("della", "della", Consensus::sign),
      della("della-linear", "della_linear", Consensus::none),
      standalone("nearswap", "nearswap", k_nearswap, BaseUse::required, 1, 1, make_nearswap),
      standalone("sce", "sce", k_sce, BaseUse::required, 1, 0, make_sce),
      standalone("arcee-fusion", "arcee_fusion", {}, BaseUse::required, 1, 1, make_arcee_fusion),
  };
  return table;
}

std::string number(double v) { return parameter_text(v); }

// A range's end in full (1000000, not 1e+06).
std::string end_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

}  // namespace

std::span<const MethodSpec> method_specs() { return rows(); }

std::vector<Named<const MethodSpec*>> method_names() {
  std::vector<Named<const MethodSpec*>> names;
  for (const MethodSpec& s : rows())
    if (!s.name.empty()) names.push_back({s.name, &s});
  return names;
}

const MethodSpec& default_method() { return rows().front(); }

const MethodSpec& method_row(std::string_view name) {
  const MethodSpec* s = find_method(name);
  WAVG_ASSERT(s && "method_row: a name without a row");
  return *s;
}

const MethodSpec* find_method(std::string_view name) {
  for (const MethodSpec& s : rows())
    if (s.name == name) return &s;
  return nullptr;
}

const MethodSpec* find_mergekit_method(std::string_view name) {
  for (const MethodSpec& s : rows())
    if (!s.mergekit.empty() && s.mergekit == name) return &s;
  return nullptr;
}

std::vector<const ParamSpec*> option_params() {
  std::vector<const ParamSpec*> out;
  for (const MethodSpec& s : rows())
    for (const ParamSpec& p : s.params) {
      if (p.key.empty() || p.option.empty() || p.help.empty()) continue;
      const auto same = [&](const ParamSpec* q) { return q->option == p.option; };
      if (std::none_of(out.begin(), out.end(), same)) out.push_back(&p);
    }
  return out;
}

std::string_view option_named(std::string_view key) {
  for (const MethodSpec& s : rows())
    if (const ParamSpec* p = find_param(s, key); p && !p->option.empty()) return p->option;
  WAVG_ASSERT(!"option_named: a parameter without an option");
  return key;
}

const ParamSpec* find_option(const MethodSpec& spec, std::string_view option) {
  for (const ParamSpec& p : spec.params)
    if (!p.option.empty() && p.option == option) return &p;
  return nullptr;
}

std::string methods_taking(std::string_view option, std::string_view last_separator) {
  std::vector<std::string_view> names;
  for (const MethodSpec& s : rows())
    if (!s.name.empty() && find_option(s, option)) names.push_back(s.name);
  std::string text;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (k) text += k + 1 == names.size() ? last_separator : ", ";
    text += names[k];
  }
  return text;
}

const ParamSpec* find_param(const MethodSpec& spec, std::string_view key) {
  for (const ParamSpec& p : spec.params)
    if (!p.key.empty() && p.key == key) return &p;
  return nullptr;
}

std::string weights_problem(const MethodSpec& spec, std::span<const double> weights, bool normalize) {
  double sum = 0, magnitude = 0;
  for (double w : weights) {
    if (!std::isfinite(w)) return "weight " + number(w) + " is not finite";
    if (spec.weights == WeightRule::convex && w < 0) return "weight " + number(w) + " is negative";
    sum += w;
    magnitude += std::fabs(w);
  }
  if (weights.empty()) return {};
  if (spec.weights == WeightRule::convex && !(sum > 0)) return "the weights sum to zero";
  if (!std::isfinite(magnitude)) return "the sum of the weights overflows";
  // The backends treat a divisor below 1e-8 as 1 (mergekit's guard against a zero division), which would leave the
  // combination silently unnormalised: refused instead. With a sign consensus each element is divided by the
  // weights that agree with it, which cannot cancel.
  if (spec.weights == WeightRule::signed_ && normalize && spec.consensus == Consensus::none && std::fabs(sum) < 1e-8)
    return "the weights sum to zero (" + number(sum) + "), and normalizing divides by their sum";
  return {};
}

void check_tensor_weights(const MethodSpec& spec, const std::string& source, const std::string& tensor,
                          std::span<const double> weights, bool normalize) {
  if (const std::string p = weights_problem(spec, weights, normalize); !p.empty())
    throw Error(ExitCode::usage, source, "tensor " + tensor + ": weight: " + p);
}

std::string range_text(const ParamSpec& p) {
  if (p.lo == -k_inf && p.hi == k_inf) return "finite";
  std::string s(p.lo_open ? "(" : "[");
  s += end_text(p.lo);
  s += ", ";
  s += end_text(p.hi);
  s += p.hi_open ? ")" : "]";
  return s;
}

std::string range_problem(const ParamSpec& p, std::string_view name, double v) {
  if (!p.ranged) return {};
  const bool ok = std::isfinite(v) && (p.lo_open ? v > p.lo : v >= p.lo) && (p.hi_open ? v < p.hi : v <= p.hi);
  if (ok) return {};
  if (p.lo == -k_inf && p.hi == k_inf) return std::string(name) + " " + number(v) + " is not finite";
  return std::string(name) + " " + number(v) + " is not in " + range_text(p);
}

}  // namespace wavg
