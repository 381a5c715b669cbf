// The method table (src/core/methods/registry.cpp): the one check of weights every front end uses, against
// hand-picked weights whose sums are known.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "wavg/error.hpp"
#include "wavg/method_spec.hpp"
#include "wavg/task_methods.hpp"

using namespace wavg;

namespace {

std::string problem(std::string_view method, std::vector<double> w, bool normalize) {
  return weights_problem(method_row(method), w, normalize);
}

}  // namespace

TEST_CASE("the mean's weights: finite, not negative, a positive finite sum") {
  CHECK(problem("mean", {1, 3}, true).empty());
  CHECK(problem("mean", {}, true).empty());
  CHECK(problem("mean", {0, 0}, true) == "the weights sum to zero");
  CHECK(problem("mean", {1, -1}, true) == "weight -1 is negative");
  CHECK(problem("mean", {1, std::numeric_limits<double>::infinity()}, true) == "weight inf is not finite");
  CHECK(problem("mean", {1e308, 1e308}, true) == "the sum of the weights overflows");
}

TEST_CASE("signed weights: negatives subtract, a zero sum only matters where the method divides by it") {
  CHECK(problem("task-arithmetic", {1, -1}, false).empty());
  CHECK(problem("task-arithmetic", {1, -1}, true) ==
        "the weights sum to zero (0), and normalizing divides by their sum");
  CHECK(problem("multislerp", {0, 0}, true) == "the weights sum to zero (0), and normalizing divides by their sum");
  CHECK(problem("multislerp", {0, 0}, false).empty());
  // TIES divides each element by the weights that agree with its sign: they cannot cancel.
  CHECK(problem("ties", {1, -1}, true).empty());
  CHECK(problem("dare-linear", {1e308, 1e308}, false) == "the sum of the weights overflows");
  CHECK(problem("nuslerp", {-1e308, -1e308}, false) == "the sum of the weights overflows");
  CHECK(problem("nuslerp", {std::numeric_limits<double>::quiet_NaN(), 1}, false) == "weight nan is not finite");
}

// Each method's row, checked against what its documentation (wavg-merge(1), mergekit's merge methods) says it takes:
// the options it accepts, those it needs, whether it needs a base, and how many inputs. Each option a method does not
// take is refused, each it needs is asked for, and a value outside each documented range is refused, through the
// validation merge runs (validate_task, validate_federated).
namespace {

struct Expected {
  const char* name;
  bool task;  // validated by validate_task (else validate_federated)
  std::vector<std::string> takes, needs;
  char base;                // 'r' required, 'n' refused, 'o' optional
  std::size_t inputs;       // a valid count
  std::size_t least, most;  // the fewest and most inputs it takes (besides a base); most 0: no bound
};

const std::vector<std::string> k_task_options{"--weights", "--lambda",           "--normalize",  "--density",
                                              "--gamma",   "--epsilon",          "--rescale",
                                              "--t",       "--karcher-max-iter", "--karcher-tol", "--select-topk"};
const std::vector<std::string> k_federated_options{"--weights", "--trim", "--byzantine", "--select"};

const std::vector<Expected> k_expected{
    {"mean", false, {"--weights"}, {}, 'o', 3, 1, 0},
    {"median", false, {"--weights"}, {}, 'o', 3, 1, 0},
    {"trimmed-mean", false, {"--trim"}, {"--trim"}, 'o', 3, 1, 0},
    {"krum", false, {"--byzantine"}, {"--byzantine"}, 'o', 3, 3, 0},
    {"multi-krum", false, {"--weights", "--byzantine", "--select"}, {"--byzantine", "--select"}, 'o', 3, 3, 0},
    {"geometric-median", false, {"--weights"}, {}, 'o', 3, 1, 0},
    {"task-arithmetic", true, {"--weights", "--lambda", "--normalize"}, {}, 'r', 3, 1, 0},
    {"ties", true, {"--weights", "--lambda", "--normalize", "--density"}, {"--density"}, 'r', 3, 1, 0},
    {"dare-linear",
     true,
     {"--weights", "--lambda", "--normalize", "--density", "--rescale"},
     {"--density"},
     'r',
     3,
     1,
     0},
    {"dare-ties",
     true,
     {"--weights", "--lambda", "--normalize", "--density", "--rescale"},
     {"--density"},
     'r',
     3,
     1,
     0},
    {"breadcrumbs",
     true,
     {"--weights", "--lambda", "--normalize", "--density", "--gamma"},
     {"--density"},
     'r',
     3,
     1,
     0},
    {"breadcrumbs-ties",
     true,
     {"--weights", "--lambda", "--normalize", "--density", "--gamma"},
     {"--density"},
     'r',
     3,
     1,
     0},
    {"della",
     true,
     {"--weights", "--lambda", "--normalize", "--density", "--epsilon", "--rescale"},
     {"--density"},
     'r',
     3,
     1,
     0},
    {"della-linear",
     true,
     {"--weights", "--lambda", "--normalize", "--density", "--epsilon", "--rescale"},
     {"--density"},
     'r',
     3,
     1,
     0},
    {"slerp", true, {"--t"}, {"--t"}, 'n', 2, 2, 2},
    {"model-stock", true, {}, {}, 'r', 2, 2, 0},
    {"nuslerp", true, {"--weights"}, {"--weights"}, 'o', 2, 2, 2},
    {"multislerp", true, {"--weights", "--normalize"}, {}, 'o', 3, 1, 0},
    {"karcher", true, {"--karcher-max-iter", "--karcher-tol"}, {}, 'n', 3, 1, 0},
    {"nearswap", true, {"--t"}, {"--t"}, 'r', 1, 1, 1},
    {"sce", true, {"--select-topk"}, {}, 'r', 3, 1, 0},
    {"arcee-fusion", true, {}, {}, 'r', 1, 1, 1},
};

// A documented value outside each ranged option's range, and one inside it.
struct Range {
  const char* option;
  double bad, good;
};
const Range k_ranges[]{{"--density", 0, 1},     {"--density", 1.5, 0.5},
                       {"--gamma", -0.1, 1},    {"--epsilon", 1, 0},
                       {"--t", std::numeric_limits<double>::infinity(), 1.5},         {"--karcher-max-iter", -1, 0},
                       {"--karcher-tol", 2, 1}, {"--lambda", std::numeric_limits<double>::infinity(), -2},
                       {"--trim", 0.5, 0},      {"--gm-tol", 1, 0},
                       {"--gm-eps", 0, 1},  {"--select-topk", 1.5, 0},      {"--gm-max-iter", 0, 1}};

struct Given {
  TaskOptions task;
  FederatedOptions fed;
  std::size_t inputs;
};

void set(Given& g, std::string_view option, double v) {
  TaskOptions& t = g.task;
  RobustOptions& r = g.fed.robust;
  if (option == "--weights") t.weights = g.fed.weights = std::vector<double>(g.inputs, v == 0 ? 1 : v);
  if (option == "--lambda") t.params["lambda"] = v;
  if (option == "--normalize") t.normalize = v != 0;
  if (option == "--density") t.params["density"] = v;
  if (option == "--gamma") t.params["gamma"] = v;
  if (option == "--epsilon") t.params["epsilon"] = v;
  if (option == "--rescale") t.rescale = DareRescale::l1;
  if (option == "--seed") t.seed = 7;
  if (option == "--t") t.params["t"] = v;
  if (option == "--karcher-max-iter") t.params["max_iter"] = static_cast<int>(v);
  if (option == "--karcher-tol") t.params["tol"] = v;
  if (option == "--select-topk") t.params["select_topk"] = v;
  if (option == "--trim") r.trim = v;
  if (option == "--byzantine") r.byzantine = static_cast<int>(v);
  if (option == "--select") r.select = v == 0 ? 1 : static_cast<int>(v);
  if (option == "--gm-tol") r.gm_tol = v;
  if (option == "--gm-eps") r.gm_eps = v;
  if (option == "--gm-max-iter") r.gm_max_iter = static_cast<int>(v);
}

void unset(Given& g, std::string_view option) {
  if (option == "--weights") g.task.weights.clear(), g.fed.weights.clear();
  if (option == "--density") g.task.params.erase("density");
  if (option == "--t") g.task.params.erase("t");
  if (option == "--trim") g.fed.robust.trim.reset();
  if (option == "--byzantine") g.fed.robust.byzantine.reset();
  if (option == "--select") g.fed.robust.select.reset();
}

void validate(const Expected& e, Given g) {
  if (e.task)
    validate_task(g.task, g.fed, g.inputs);
  else
    validate_federated(g.fed, g.inputs);
}

// The method with every option it needs given a valid value (0 for --byzantine, 1 for --select).
Given valid(const Expected& e) {
  Given g;
  g.inputs = e.inputs;
  const MethodSpec* row = find_method(e.name);
  REQUIRE(row);
  g.task.method = g.fed.robust.method = row;
  g.task.has_base = g.fed.has_base = e.base == 'r';
  for (const std::string& option : e.needs) set(g, option, option == "--t" ? 0.5 : option == "--density" ? 0.5 : 0);
  return g;
}

bool contains(const std::vector<std::string>& v, std::string_view s) {
  for (const std::string& x : v)
    if (x == s) return true;
  return false;
}

}  // namespace

TEST_CASE("every method's row: the options it takes and needs, its base and its inputs, as documented") {
  std::size_t rows = 0;
  for (const MethodSpec& s : method_specs())
    if (!s.name.empty()) ++rows;
  CHECK(rows == k_expected.size());
  for (const Expected& e : k_expected) {
    CAPTURE(std::string(e.name));
    const Given base = valid(e);
    CHECK_NOTHROW(validate(e, base));
    for (const std::string& option : e.task ? k_task_options : k_federated_options) {
      CAPTURE(option);
      Given g = base;
      set(g, option, option == "--density" || option == "--t" ? 0.5 : 0);
      if (contains(e.takes, option))
        CHECK_NOTHROW(validate(e, g));
      else
        CHECK_THROWS_AS(validate(e, g), Error);
    }
    for (const std::string& option : e.needs) {
      CAPTURE(option);
      Given g = base;
      unset(g, option);
      CHECK_THROWS_AS(validate(e, g), Error);
    }
    for (const Range& r : k_ranges) {
      if (!contains(e.takes, r.option) && std::string_view(r.option).rfind("--gm-", 0) != 0) continue;
      if (std::string_view(r.option).rfind("--gm-", 0) == 0 && std::string_view(e.name) != "geometric-median") continue;
      CAPTURE(r.option);
      CAPTURE(r.bad);
      Given g = base;
      set(g, r.option, r.good);
      CHECK_NOTHROW(validate(e, g));
      set(g, r.option, r.bad);
      CHECK_THROWS_AS(validate(e, g), Error);
    }
    if (e.base != 'o') {
      Given g = base;
      g.task.has_base = g.fed.has_base = e.base != 'r';
      CHECK_THROWS_AS(validate(e, g), Error);
    }
    for (std::size_t n : {e.least - 1, e.least, e.most + 1}) {
      if (n == 0 || (n > e.least && e.most == 0)) continue;
      CAPTURE(n);
      Given g = base;
      g.inputs = n;
      if (!g.task.weights.empty()) set(g, "--weights", 1);
      if (n == e.least)
        CHECK_NOTHROW(validate(e, g));
      else
        CHECK_THROWS_AS(validate(e, g), Error);
    }
  }
}

// mergekit takes a seed for any recipe (wrappers always pass one): so does every method, using it where it draws.
TEST_CASE("every method takes --seed") {
  for (const Expected& e : k_expected) {
    CAPTURE(std::string(e.name));
    Given g = valid(e);
    g.task.seed = g.fed.privacy.seed = 7;
    CHECK_NOTHROW(validate(e, g));
  }
}

// Every row's parameters, validated from the row itself: a method with the values it needs (each a value its range
// holds) validates; each ranged option accepts a closed end and refuses an open one, refuses a value beyond each
// finite end, and refuses infinity and NaN where the range is unbounded; each option the row needs is asked for
// when left out. The values come from the row, the verdicts from the validation merge runs, so a row whose
// parameters the validation does not enforce fails here.
namespace {

bool federated(const MethodSpec& row) { return row.family == Family::federated; }

// A value inside the parameter's range: its default, else a closed end, else a point between its ends.
double inside(const ParamSpec& p) {
  if (p.has_fallback) return p.fallback;
  if (!p.ranged) return p.option == "--select" ? 1 : 0;
  if (std::isfinite(p.lo) && !p.lo_open) return p.lo;
  if (std::isfinite(p.hi) && !p.hi_open) return p.hi;
  if (std::isfinite(p.lo)) return std::isfinite(p.hi) ? (p.lo + p.hi) / 2 : p.lo + 1;
  return std::isfinite(p.hi) ? p.hi - 1 : 0.5;
}

// Sets the row's parameter `p` (by its key where it has one, else by merge's option) to `v`.
void set_param(Given& g, const ParamSpec& p, double v) {
  if (p.key == "weight")
    g.task.weights = g.fed.weights = std::vector<double>(g.inputs, v == 0 ? 1 : v);
  else if (!p.key.empty() && !p.flag)
    g.task.params[std::string(p.key)] = v;
  else
    set(g, p.option, v);
}

void unset_param(Given& g, const ParamSpec& p) {
  if (!p.key.empty() && p.key != "weight") g.task.params.erase(std::string(p.key));
  unset(g, p.option);
}

// The method `row` with every parameter it needs given a value inside its range.
Given valid_for(const MethodSpec& row) {
  Given g;
  g.inputs = row.max_inputs ? row.max_inputs : std::max<std::size_t>(row.min_inputs, 3);
  g.task.method = g.fed.robust.method = &row;
  g.task.has_base = g.fed.has_base = row.base == BaseUse::required;
  for (const ParamSpec& p : row.params)
    if ((p.need == Need::option || p.need == Need::always) && !p.option.empty()) set_param(g, p, inside(p));
  return g;
}

void validate_row(const MethodSpec& row, Given g) {
  if (federated(row))
    validate_federated(g.fed, g.inputs);
  else
    validate_task(g.task, g.fed, g.inputs);
}

// Tells whether `v` can be given to the parameter's option at all (the Weiszfeld cap is an int).
bool representable(const ParamSpec& p, double v) {
  return p.option != "--gm-max-iter" || (v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max());
}

}  // namespace

TEST_CASE("each registry row's parameters validate as the row states") {
  const double inf = std::numeric_limits<double>::infinity();
  for (const MethodSpec& row : method_specs()) {
    if (row.name.empty()) continue;  // mergekit's linear: a recipe's only, checked by the recipe tests
    SUBCASE(std::string(row.name).c_str()) {
      const Given base = valid_for(row);
      CHECK_NOTHROW(validate_row(row, base));
      for (const ParamSpec& p : row.params) {
        if (p.option.empty()) continue;  // a recipe's only
        CAPTURE(std::string(p.option));
        if (p.need == Need::option || p.need == Need::always) {
          Given g = base;
          unset_param(g, p);
          CHECK_THROWS_AS(validate_row(row, g), Error);
        }
        if (!p.ranged) continue;
        // (value, accepted): the ends, beyond them, and the non-finite values.
        std::vector<std::pair<double, bool>> cases{{inside(p), true}, {std::nan(""), false}};
        if (std::isfinite(p.lo)) cases.insert(cases.end(), {{p.lo, !p.lo_open}, {p.lo - 1, false}});
        if (std::isfinite(p.hi)) cases.insert(cases.end(), {{p.hi, !p.hi_open}, {p.hi + 1, false}});
        if (!std::isfinite(p.lo)) cases.push_back({-inf, false});
        if (!std::isfinite(p.hi)) cases.push_back({inf, false});
        for (const auto& [v, accepted] : cases) {
          if (!representable(p, v) || (p.option == "--gm-max-iter" && std::isnan(v))) continue;
          CAPTURE(v);
          Given g = base;
          set_param(g, p, v);
          if (accepted)
            CHECK_NOTHROW(validate_row(row, g));
          else
            CHECK_THROWS_AS(validate_row(row, g), Error);
        }
      }
    }
  }
}
