// Pairing by position (--match order). Keras auto-names layers per session (dense_3 in one run, dense in the next)
// and Keras 2 and 3 name the same variable differently (model_weights/dense/dense/kernel:0 vs layers/dense/vars/0),
// so checkpoints of one architecture often share no names at all. Their weights still come in the same order:
// layers in model order, each layer's variables in creation order. So the model's tensors are paired by index, and
// every pair must agree in shape and dtype. Optimizer state is paired the same way when it can be; Keras 2 and 3
// keep different optimizer variables (Keras 3 adds the learning rate), and then input 1's is kept, with a warning.

#include <string>

#include "wavg/error.hpp"
#include "wavg/plan.hpp"

namespace wavg {

namespace {

struct Split {
  std::vector<std::size_t> model, optimizer;  // tensor indices in the reader's order
};

Split split(const Reader& r) {
  Split s;
  const auto& t = r.tensors();
  for (std::size_t i = 0; i < t.size(); ++i) (is_optimizer_state(t[i].name) ? s.optimizer : s.model).push_back(i);
  return s;
}

bool same_kind(const TensorInfo& a, const TensorInfo& b) { return a.shape == b.shape && a.dtype == b.dtype; }

// Tells whether the tensors at `a` in input 1 and `b` in `other` pair up one to one.
bool pairs(const Reader& first, const std::vector<std::size_t>& a, const Reader& other,
           const std::vector<std::size_t>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_kind(first.tensors()[a[i]], other.tensors()[b[i]])) return false;
  return true;
}

}  // namespace

bool is_optimizer_state(const std::string& name) {
  return name.rfind("optimizer_weights/", 0) == 0 || name.rfind("optimizer/", 0) == 0;
}

bool pairs_by_order(const std::vector<Reader*>& inputs) {
  const Split first = split(*inputs.front());
  for (std::size_t k = 1; k < inputs.size(); ++k)
    if (!pairs(*inputs.front(), first.model, *inputs[k], split(*inputs[k]).model)) return false;
  return !first.model.empty();
}

Plan build_plan_by_order(const std::vector<Reader*>& inputs, const PlanOptions& options) {
  const Reader& first = *inputs.front();
  const Split s1 = split(first);
  std::vector<Problem> problems;
  Plan plan;
  // source[k][i]: the index in input k paired with input 1's tensor i, or npos when unpaired.
  constexpr std::size_t npos = static_cast<std::size_t>(-1);
  std::vector<std::vector<std::size_t>> source(inputs.size(), std::vector<std::size_t>(first.tensors().size(), npos));
  for (std::size_t i = 0; i < first.tensors().size(); ++i) source[0][i] = i;
  bool optimizer_paired = true;

  for (std::size_t k = 1; k < inputs.size(); ++k) {
    const Reader& other = *inputs[k];
    const Split sk = split(other);
    if (sk.model.size() != s1.model.size()) {
      problems.push_back({other.path(), "has " + std::to_string(sk.model.size()) + " model tensors, " + first.path() +
                                            " has " + std::to_string(s1.model.size()) + " (--match order)"});
      continue;
    }
    for (std::size_t i = 0; i < s1.model.size(); ++i) {
      const TensorInfo& want = first.tensors()[s1.model[i]];
      const TensorInfo& found = other.tensors()[sk.model[i]];
      if (!same_kind(want, found))
        problems.push_back({other.path(), "tensor " + std::to_string(i + 1) + " (" + found.name + ") is " +
                                              std::string(dtype_name(found.dtype)) + " " + shape_string(found.shape) +
                                              ", but " + want.name + " in " + first.path() + " is " +
                                              std::string(dtype_name(want.dtype)) + " " + shape_string(want.shape)});
      source[k][s1.model[i]] = sk.model[i];
    }
    if (pairs(first, s1.optimizer, other, sk.optimizer)) {
      for (std::size_t i = 0; i < s1.optimizer.size(); ++i) source[k][s1.optimizer[i]] = sk.optimizer[i];
    } else if (!s1.optimizer.empty() || !sk.optimizer.empty()) {
      optimizer_paired = false;
      plan.warnings.push_back(other.path() + ": its " + std::to_string(sk.optimizer.size()) +
                              " optimizer tensors do not pair with the " + std::to_string(s1.optimizer.size()) +
                              " of " + first.path() + "; the output keeps input 1's optimizer state");
    }
  }

  for (std::size_t i = 0; i < first.tensors().size(); ++i) {
    const TensorInfo& t = first.tensors()[i];
    PlanEntry entry{t, {i}, Action::average};
    const bool optimizer = is_optimizer_state(t.name);
    if (optimizer && !optimizer_paired) {
      entry.action = Action::copy_first;  // only input 1's values exist for it
    } else {
      for (std::size_t k = 1; k < inputs.size(); ++k) entry.source.push_back(source[k][i]);
      if (!is_float(t.dtype)) {
        entry.action = options.int_policy == IntPolicy::equal ? Action::check_equal : Action::copy_first;
        if (options.int_policy == IntPolicy::error)
          problems.push_back({first.path(), t.name + ": " + std::string(dtype_name(t.dtype)) +
                                                " tensor cannot be averaged (--int-policy error)"});
      }
    }
    plan.entries.push_back(std::move(entry));
  }
  if (!problems.empty()) throw Error(ExitCode::incompatible, std::move(problems));
  return plan;
}

}  // namespace wavg
