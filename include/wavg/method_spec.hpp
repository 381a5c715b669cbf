#pragma once
// One row per merge method (--method), as formats/registry.cpp is for codecs: its names, its family and the
// family's switches, the parameters it takes (with defaults, ranges and whether they are required), which weights
// it accepts, whether it needs a base, how many inputs, and the function that makes it. Validation, the recipe
// reader, --help, completion and the backends read these rows; a new method is its own file and one row in
// src/core/methods/registry.cpp.

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wavg/backend.hpp"
#include "wavg/method.hpp"
#include "wavg/names.hpp"

namespace wavg {

struct FederatedOptions;
struct Plan;
class ServerState;
struct TaskOptions;

// Which code runs a method: the (weighted) mean and the federated aggregators (federated.hpp), the task-vector
// and spherical methods (task_methods.hpp), or a method of its own file that shares no family's switches
// (nearswap, sce, arcee-fusion); all but the first take TaskOptions.
enum class Family { federated, task_vectors, spherical, standalone };

// The federated family's switch (federated.cpp): how the clients' updates are combined. krum returns the input the
// Krum score picks, or with --select the mean of the M it picks (multi-krum).
enum class Reduce { mean, median, trimmed_mean, krum, geometric_median };
// The spherical family's switch (slerp_stock.cpp): which coefficients each tensor's Gram matrix gives.
enum class Sphere { slerp, model_stock, nuslerp, multislerp, karcher };

// Which weights a method accepts (one per input):
//   none    the method takes no weights;
//   convex  the mean's: finite, not negative, their sum positive and finite (they are divided by it);
//   signed  finite, a negative one subtracts a task vector; their magnitudes' sum finite, and where the method
//           divides by their sum (normalize, no sign consensus), that sum not zero.
enum class WeightRule { none, convex, signed_ };

enum class BaseUse { none, optional, required };
enum class Scope { global, per_model };
// How a parameter must be given: `option` when merge's own option is required but a recipe may leave it to
// mergekit's default (density), `recipe` when only a recipe must give it (mergekit's weight has no default; merge's
// --weights defaults to 1 each), `always` when both front ends need it (slerp's t).
enum class Need { optional, option, recipe, always };

// One parameter of a method: its name in a recipe (mergekit's) and on merge's command line.
struct ParamSpec {
  std::string_view key;     // mergekit's name in a recipe's parameters ("density")
  std::string_view option;  // merge's option ("--density"); empty: recipe only
  Scope scope = Scope::global;
  Need need = Need::optional;
  double fallback = 0;  // the default (mergekit's), used when `has_fallback`
  bool has_fallback = false;
  // The range: [lo, hi], an end excluded where open; a flag (true/false in a recipe) has none.
  double lo = 0, hi = 0;
  bool lo_open = false, hi_open = false, ranged = false;
  bool flag = false;  // a switch for the whole merge (a recipe's true/false), not a number per tensor
  // A switch wavg runs one way only (mergekit's nuslerp_flatten: true): the value it runs, and why the other is
  // not supported.
  std::optional<bool> runs_only;
  std::string_view unsupported;
  std::string_view usage;  // what a refusal for a missing option shows after it: "D (the fraction ...)"
  std::string_view help;   // merge's --help for the option, after the methods taking it; empty: declared elsewhere
  bool whole = false;      // the option takes a whole number (--karcher-max-iter)
};

// Everything make() needs; `state` may be null.
struct MethodArgs {
  Backend& backend;
  const Plan& plan;
  const FederatedOptions& federated;
  const TaskOptions* task;  // the task-vector and spherical families
  ServerState* state;
};
using MethodMaker = std::unique_ptr<Method> (*)(const MethodArgs&);

// A method is its row: the rest of the program holds a `const MethodSpec*` (one of method_specs()) and asks it.
struct MethodSpec {
  std::string_view name;      // --method
  std::string_view mergekit;  // merge_method in a recipe; empty: none
  Family family = Family::federated;
  Reduce reduce = Reduce::mean;   // the federated family's switch
  Sphere sphere = Sphere::slerp;  // the spherical family's switch
  // The family's switches (task vectors): how each task vector is sparsified, whether only the entries agreeing
  // with the sign of the sum count, whether --rescale applies, and whether the combined vector is divided by the
  // weights' sum unless --normalize/--no-normalize says otherwise.
  Sparsify sparsify = Sparsify::none;
  Consensus consensus = Consensus::none;
  bool rescales = false;
  // della: keep probabilities ranked per row within density +- epsilon, which must stay inside (0, 1); one
  // inverse-density factor per tensor has no meaning there.
  bool ranked_keep = false;
  bool normalize_default = false;
  bool takes_normalize = false;  // --normalize (a recipe's normalize, or multislerp's normalize_weights)
  std::span<const ParamSpec> params;
  WeightRule weights = WeightRule::none;
  BaseUse base = BaseUse::none;
  std::size_t min_inputs = 1, max_inputs = 0;  // 0: no upper bound (inputs besides the base)
  // mergekit's linear: task arithmetic on the models themselves, no base, normalised by default; a recipe's
  // merge_method only (its row has no --method name).
  bool linear = false;
  // mergekit's slerp: base_model is not a base but the model at t = 0, input 1.
  bool base_first = false;
  // Why a base is refused, for the message ("interpolates between two models").
  std::string_view without_base;
  // Why per-input weights are refused (the robust aggregators that cut or pick inputs); empty: they are taken.
  std::string_view unweighted;
  MethodMaker make = nullptr;
};

// Returns every method's row, in --method's order.
std::span<const MethodSpec> method_specs();
// Returns --method's names, from the rows, for its choices (help and completion).
std::vector<Named<const MethodSpec*>> method_names();
// Returns --method's default, the first row: the (weighted) mean.
const MethodSpec& default_method();
// Returns the row whose --method name is `name`, which must exist (the program's own names: "task-arithmetic").
const MethodSpec& method_row(std::string_view name);
// Returns the row whose --method name (or, `mergekit`, merge_method) is `name`, or null.
const MethodSpec* find_method(std::string_view name);
const MethodSpec* find_mergekit_method(std::string_view name);
// Returns the row a task-vector method's options name (mergekit's linear for TaskOptions::linear).
const MethodSpec& task_row(const TaskOptions& options);
// Returns the parameter of `spec` that recipes call `key`, or null.
const ParamSpec* find_param(const MethodSpec& spec, std::string_view key);
// Returns the numeric parameters merge takes as its own options (--lambda, --density, ...), each once, in --help's
// order: every row's parameter with a key, an option and a help text.
std::vector<const ParamSpec*> option_params();
// Returns merge's option for the parameter recipes call `key` ("--karcher-max-iter" for "max_iter").
std::string_view option_named(std::string_view key);
// Returns the parameter of `spec` that merge calls `option` ("--density"), or null.
const ParamSpec* find_option(const MethodSpec& spec, std::string_view option);
// Returns the --method names of the rows taking `option`, for help and messages: "ties, dare-linear, della", the
// last two joined by `last_separator`.
std::string methods_taking(std::string_view option, std::string_view last_separator = ", ");

// Checks `weights` (one per input) against the method's rule; `normalize`: whether the method divides by their
// sum. Returns what is wrong ("weight -1 is negative"), or an empty string. The one check of weights, for merge's
// --weights, a recipe's scalar weights and its per-tensor ones.
std::string weights_problem(const MethodSpec& spec, std::span<const double> weights, bool normalize);

// Checks one tensor's weights from a recipe (`source`) as weights_problem does; throws Error(usage) naming the
// recipe and the tensor.
void check_tensor_weights(const MethodSpec& spec, const std::string& source, const std::string& tensor,
                          std::span<const double> weights, bool normalize);

// Checks `value` against the parameter's range; returns what is wrong ("density 2 is not in (0, 1]"), or an
// empty string.
std::string range_problem(const ParamSpec& p, std::string_view name, double value);
// Returns the range as it is written in messages: "(0, 1]".
std::string range_text(const ParamSpec& p);

}  // namespace wavg
