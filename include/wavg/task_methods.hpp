#pragma once
// Merge methods for fine-tunes of one base model, as mergekit defines them so that results agree with it: task
// arithmetic (Ilharco et al., 2023), TIES (Yadav et al., 2023), DARE (Yu et al., 2024), Model Breadcrumbs
// (Davari and Belilovsky, 2024), DELLA (Deep et al., 2024) on the task vectors
// tau_k = x_k - base, spherical interpolation of two models (SLERP), and model stock (Jang et al., 2024). The
// formulas are in wavg-merge(1), TASK VECTORS; how they stream is at the top of src/core/methods/task_vectors.cpp and
// src/core/methods/slerp_stock.cpp.

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wavg/backend.hpp"
#include "wavg/federated.hpp"
#include "wavg/method.hpp"
#include "wavg/names.hpp"
#include "wavg/plan.hpp"
#include "wavg/tensor_values.hpp"

namespace wavg {

// How DARE rescales the entries its random mask keeps (--rescale): by 1/density (the DARE paper, mergekit <= 0.0.6),
// by the L1-norm ratio |tau|_1 / |masked tau|_1 of each tensor (mergekit >= 0.1, the default), or not at all.
enum class DareRescale { inverse_density, l1, none };
inline constexpr std::array<Named<DareRescale>, 3> k_dare_rescale_names{
    {{"inverse-density", DareRescale::inverse_density}, {"l1", DareRescale::l1}, {"none", DareRescale::none}}};

// A method's numeric parameters as given, by their row's key (ParamSpec::key in method_spec.hpp).
using ParamValues = std::map<std::string, double, std::less<>>;

struct TaskOptions {
  const MethodSpec* method = &method_row("task-arithmetic");  // its row
  std::vector<double> weights;         // empty: 1 for every input (task vectors' weights are not normalised)
  // The method's numeric parameters as given (--lambda, --density, ...; a recipe's plain scalars), by their row's
  // key ("lambda", "max_iter"): what each means, its range and its default are its ParamSpec (registry.cpp).
  ParamValues params;
  std::optional<std::uint64_t> seed;   // dare-*, della*: none draws one from the system's entropy source
  std::optional<DareRescale> rescale;  // dare-*, della*: none given means DareRescale::l1
  std::optional<bool> normalize;       // divide by the (agreeing) weights' sum; none given: ties yes, others no
  // A recipe's per-tensor values (weight, density, lambda, t), over the scalars above; null: none.
  std::shared_ptr<const TensorValues> values;
  bool has_base = false;
  bool linear = false;  // task-arithmetic on the models themselves, no base: mergekit's linear (sum_k w_k x_k)

  // Returns parameter `key` as given, or nothing.
  std::optional<double> param(std::string_view key) const {
    const auto it = params.find(key);
    return it == params.end() ? std::nullopt : std::optional<double>(it->second);
  }
};

// Tells whether --method names a task-vector method rather than a federated aggregator.
bool is_task_method(const MethodSpec& m);
// Formats a method parameter as printf's %g does, for messages and descriptions.
std::string parameter_text(double v);
// Returns the end of a task-vector method's description: lambda, normalize, the weights, recipe values, base.
std::string describe_common(const TaskOptions& o);
// Checks the options against the number of inputs and refuses the federated options, which do not apply. Throws a
// usage error (exit 2) giving the reason.
void validate_task(const TaskOptions& o, const FederatedOptions& federated, std::size_t inputs);

// della's default epsilon (mergekit's).
constexpr double k_della_epsilon = 0.15;
// Checks della's density and epsilon as mergekit does (with density < 1, density - epsilon > 0 and
// density + epsilon < 1) and epsilon in [0, 1): returns what is wrong, or an empty string.
std::string della_problem(double density, double epsilon);

// Builds the task-vector or spherical method `options.method` names (its row's maker). The options must have
// passed validate_task; `plan` must outlive the method.
std::unique_ptr<Method> make_task_method(Backend& backend, const Plan& plan, const TaskOptions& options);

}  // namespace wavg
