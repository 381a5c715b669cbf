// Pairing by position (--match order). Keras auto-names layers per session (dense_3 in one run, dense in the next)
// and Keras 2 and 3 name the same variable differently (model_weights/dense/dense/kernel:0 vs layers/dense/vars/0),
// so checkpoints of one architecture often share no names at all. Their weights still come in the same order:
// layers in model order, each layer's variables in creation order.
//
// Position alone is not enough: a Keras 3 file lists its layers by name (dense before einsum_dense), a Keras 2 file
// in model order (einsum_dense, dense), and when shapes agree a bare positional pairing averages two different
// layers. So when readers know their files' layers (Reader::model_layers), pairing goes layer by layer:
//   - both files know the model order (layer_names, config.json): the i-th layer with weights pairs with the i-th;
//   - a file that knows the order only among layers of one class (a Keras 3 .weights.h5 alone: dense, dense_1, ...)
//     pairs the n-th layer of each class with the other file's n-th layer of that class; that needs the other
//     file to name its layers' classes, and is refused as ambiguous when it does not;
//   - paired layers must be of the same class where both files say, and hold tensors of the same shapes;
//   - a layer whose variables come from several sub-objects (Bidirectional, MultiHeadAttention) pairs only with
//     a layer whose file orders sub-objects the same way (Keras 3 sorts them by attribute name, Keras 2 does not).
// Every refusal is exit 3 with one line naming both layers. Files without layers pair tensor by tensor.
// Tensors outside the layers (a model's own variables, integer seed states) pair by position among themselves;
// optimizer state likewise, and Keras 2 and 3 keep different optimizer variables: then input 1's is kept, with a
// warning.

#include <map>
#include <string>

#include "mismatch_tally.hpp"
#include "wavg/error.hpp"
#include "wavg/plan.hpp"

namespace wavg {

namespace {

constexpr std::size_t npos = static_cast<std::size_t>(-1);

bool same_kind(const TensorInfo& a, const TensorInfo& b) { return a.shape == b.shape && same_element_type(a, b); }

// A file's tensors as pairing sees them: layers with floating-point weights, and the rest in the file's order.
struct Parts {
  ModelLayers layers;             // only layers with float tensors, each listing only those
  std::vector<std::size_t> rest;  // model tensors outside them
  std::vector<std::size_t> optimizer;
};

// Whether a tensor outside the layers belongs to the optimizer, as the codec's role says (the plan's last-resort
// rule, which -v lists, where the file says nothing): its moments, its hyper-parameters and its counters.
bool in_optimizer(const TensorInfo& t) {
  const Role r = resolve_role(t);
  return r == Role::optimizer_state || r == Role::hyper_parameter || r == Role::counter;
}

Parts parts_of(const Reader& r) {
  Parts p;
  const auto& t = r.tensors();
  std::vector<bool> in_layer(t.size(), false);
  const ModelLayers all = r.model_layers();
  p.layers.order = all.order;
  for (const LayerInfo& l : all.layers) {
    LayerInfo kept = l;
    kept.tensors.clear();
    for (std::size_t i : l.tensors)
      if (is_float(t[i].dtype)) {
        kept.tensors.push_back(i);
        in_layer[i] = true;
      }
    if (!kept.tensors.empty()) p.layers.layers.push_back(std::move(kept));
  }
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!in_layer[i]) (in_optimizer(t[i]) ? p.optimizer : p.rest).push_back(i);
  return p;
}

bool pairs(const Reader& first, const std::vector<std::size_t>& a, const Reader& other,
           const std::vector<std::size_t>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_kind(first.tensors()[a[i]], other.tensors()[b[i]])) return false;
  return true;
}

std::string describe(const LayerInfo& l) { return l.name + (l.kind.empty() ? "" : " (" + l.kind + ")"); }

// Pairs input 1's layers with another input's: returns, per layer of input 1, the paired layer's index in `b`
// (npos when unpaired), or adds problems.
std::vector<std::size_t> pair_layers(const Reader& first, const ModelLayers& a, const Reader& other,
                                     const ModelLayers& b, std::vector<Problem>& problems, MismatchTally& tally) {
  std::vector<std::size_t> to(a.layers.size(), npos);
  if (a.layers.size() != b.layers.size()) {
    tally.add(problems,
              {other.path(), "has " + std::to_string(b.layers.size()) + " layers with weights, " + first.path() +
                                 " has " + std::to_string(a.layers.size()) + " (--match order)"},
              Mismatch::layers);
    return to;
  }
  if (a.order == LayerOrder::model && b.order == LayerOrder::model) {
    for (std::size_t i = 0; i < to.size(); ++i) to[i] = i;
    return to;
  }
  const auto kinds_known = [](const ModelLayers& m) {
    for (const LayerInfo& l : m.layers)
      if (l.kind.empty()) return false;
    return true;
  };
  if (!kinds_known(a) || !kinds_known(b)) {
    const bool a_unordered = a.order == LayerOrder::per_kind;
    tally.add(problems,
              {a_unordered ? first.path() : other.path(),
               "its layer order is unknown (a Keras 3 .weights.h5 holds no architecture; a .keras archive "
               "does) and " +
                   (a_unordered ? other.path() : first.path()) +
                   " does not name its layers' classes: pairing layers by position would be a guess "
                   "(--match order)"},
              Mismatch::layers);
    return to;
  }
  // The n-th layer of each class pairs with the n-th of that class.
  std::map<std::string, std::vector<std::size_t>> by_kind;
  for (std::size_t j = 0; j < b.layers.size(); ++j) by_kind[b.layers[j].kind].push_back(j);
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < a.layers.size(); ++i) {
    const std::string& kind = a.layers[i].kind;
    const std::size_t n = seen[kind]++;
    const auto& candidates = by_kind[kind];
    if (n < candidates.size())
      to[i] = candidates[n];
    else
      tally.add(problems,
                {other.path(), "has no layer of class " + kind + " to pair with " + describe(a.layers[i]) + " of " +
                                   first.path() + " (--match order)"},
                Mismatch::layers);
  }
  return to;
}

void note_pair(const Reader& first, std::size_t i, const Reader& other, std::size_t j, Plan& plan) {
  plan.pairing.push_back("pair: " + first.tensors()[i].name + " = " + other.tensors()[j].name + " (" + other.path() +
                         ")");
}

// Pairs tensors `a` of input 1 with `b` of another input one by one, checking each pair.
void pair_tensors(const Reader& first, const std::vector<std::size_t>& a, const Reader& other,
                  const std::vector<std::size_t>& b, std::vector<std::size_t>& source, std::vector<Problem>& problems,
                  MismatchTally& tally, Plan& plan) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const TensorInfo& want = first.tensors()[a[i]];
    const TensorInfo& found = other.tensors()[b[i]];
    if (!same_kind(want, found))
      tally.add(
          problems,
          {other.path(), found.name + " is " + element_type_name(found) + " " + shape_string(stored_shape(found)) +
                             ", but " + want.name + " in " + first.path() + " is " +
                             element_type_name(want) + " " + shape_string(stored_shape(want)) + " (--match order)"},
          want.shape != found.shape ? Mismatch::shapes : Mismatch::dtypes);
    tally.end_tensor();
    source[a[i]] = b[i];
    note_pair(first, a[i], other, b[i], plan);
  }
}

// Pairs input 1's model tensors with another input's; fills source[i] for each tensor of input 1 it pairs.
void pair_model(const Reader& first, const Parts& p1, const Reader& other, const Parts& pk,
                std::vector<std::size_t>& source, std::vector<Problem>& problems, MismatchTally& tally, Plan& plan) {
  std::vector<std::size_t> model1, modelk;  // when either file has no layers: all model tensors, one by one
  if (p1.layers.layers.empty() || pk.layers.layers.empty()) {
    for (const Parts* p : {&p1, &pk}) {
      auto& out = p == &p1 ? model1 : modelk;
      for (const LayerInfo& l : p->layers.layers) out.insert(out.end(), l.tensors.begin(), l.tensors.end());
      out.insert(out.end(), p->rest.begin(), p->rest.end());
    }
    if (model1.size() != modelk.size()) {
      tally.add(problems,
                {other.path(), "has " + std::to_string(modelk.size()) + " model tensors, " + first.path() + " has " +
                                   std::to_string(model1.size()) + " (--match order)"},
                Mismatch::layers);
      return;
    }
    pair_tensors(first, model1, other, modelk, source, problems, tally, plan);
    return;
  }
  const auto to = pair_layers(first, p1.layers, other, pk.layers, problems, tally);
  for (std::size_t i = 0; i < to.size(); ++i) {
    if (to[i] == npos) continue;
    const LayerInfo& a = p1.layers.layers[i];
    const LayerInfo& b = pk.layers.layers[to[i]];
    const std::string both = describe(b) + " would pair with " + describe(a) + " of " + first.path();
    if (!a.kind.empty() && !b.kind.empty() && a.kind != b.kind) {
      tally.add(problems, {other.path(), "layer " + both + ": different layer classes (--match order)"},
                Mismatch::layers);
    } else if (a.sub_objects != b.sub_objects) {
      tally.add(problems,
                {other.path(), "layer " + both +
                                   ": one file orders its sub-layers by attribute name (Keras 3), the "
                                   "other does not, so position cannot pair them (--match order)"},
                Mismatch::layers);
    } else if (a.tensors.size() != b.tensors.size()) {
      tally.add(problems,
                {other.path(), "layer " + both + ": " + std::to_string(b.tensors.size()) + " weights, not " +
                                   std::to_string(a.tensors.size()) + " (--match order)"},
                Mismatch::layers);
    } else {
      pair_tensors(first, a.tensors, other, b.tensors, source, problems, tally, plan);
    }
  }
  if (pairs(first, p1.rest, other, pk.rest)) {
    pair_tensors(first, p1.rest, other, pk.rest, source, problems, tally, plan);
    return;
  }
  for (std::size_t i : p1.rest) {
    const TensorInfo& t = first.tensors()[i];
    if (is_float(t.dtype))
      tally.add(problems,
                {first.path(), t.name + ": outside the model's layers, and " + other.path() +
                                   " has no tensor at the same position to pair it with (--match order)"},
                Mismatch::names);
    else
      plan.warnings.push_back(first.path() + ": " + t.name + " (" + std::string(dtype_name(t.dtype)) +
                              ") has no partner in " + other.path() + "; the output keeps input 1's");
  }
}

}  // namespace

bool is_optimizer_state(const std::string& name) {
  return name.rfind("optimizer_weights/", 0) == 0 || name.rfind("optimizer/", 0) == 0;
}

bool pairs_by_order(const std::vector<Reader*>& inputs) {
  const Parts p1 = parts_of(*inputs.front());
  if (p1.layers.layers.empty() && p1.rest.empty()) return false;
  Plan scratch;
  std::vector<Problem> problems;
  std::vector<std::size_t> source(inputs.front()->tensors().size(), npos);
  MismatchTally tally;
  for (std::size_t k = 1; k < inputs.size(); ++k)
    pair_model(*inputs.front(), p1, *inputs[k], parts_of(*inputs[k]), source, problems, tally, scratch);
  return problems.empty();
}

// In plan.cpp: what --int-policy error refuses, and its message.
bool refused_by_policy(const PlanEntry& e, const PlanOptions& options);
std::string refusal(const PlanEntry& e);

Plan build_plan_by_order(const std::vector<Reader*>& inputs, const PlanOptions& options) {
  const Reader& first = *inputs.front();
  const Parts p1 = parts_of(first);
  std::vector<Problem> problems;
  Plan plan;
  // source[k][i]: the index in input k paired with input 1's tensor i, or npos when unpaired.
  std::vector<std::vector<std::size_t>> source(inputs.size(), std::vector<std::size_t>(first.tensors().size(), npos));
  for (std::size_t i = 0; i < first.tensors().size(); ++i) source[0][i] = i;
  bool optimizer_paired = true;
  std::vector<MismatchTally> tally(inputs.size());

  for (std::size_t k = 1; k < inputs.size(); ++k) {
    const Reader& other = *inputs[k];
    const Parts pk = parts_of(other);
    pair_model(first, p1, other, pk, source[k], problems, tally[k], plan);
    if (pairs(first, p1.optimizer, other, pk.optimizer)) {
      for (std::size_t i = 0; i < p1.optimizer.size(); ++i) {
        source[k][p1.optimizer[i]] = pk.optimizer[i];
        note_pair(first, p1.optimizer[i], other, pk.optimizer[i], plan);
      }
    } else if (!p1.optimizer.empty() || !pk.optimizer.empty()) {
      optimizer_paired = false;
      plan.warnings.push_back(other.path() + ": its " + std::to_string(pk.optimizer.size()) +
                              " optimizer tensors do not pair with the " + std::to_string(p1.optimizer.size()) +
                              " of " + first.path() + "; the output keeps input 1's optimizer state");
    }
  }

  const RolesInFile roles = roles_in(first.tensors());
  for (std::size_t i = 0; i < first.tensors().size(); ++i) {
    const TensorInfo& t = first.tensors()[i];
    // --include / --exclude name input 1's tensors; their partners leave with them.
    if (!passes_filters(t.name, options)) {
      plan.excluded.push_back(t.name);
      plan.dropped_from_first.push_back(t.name);
      continue;
    }
    PlanEntry entry = plan_entry(t, i, options, roles);
    if (dropped_by_options(entry.info.role, options) || tied_to_dropped(t, plan)) {
      plan.optimizer_dropped.push_back(t.name);
      plan.dropped_from_first.push_back(t.name);
      continue;
    }
    bool unpaired = in_optimizer(t) && !optimizer_paired;
    for (std::size_t k = 1; k < inputs.size(); ++k) unpaired = unpaired || source[k][i] == npos;
    if (unpaired) {
      // Only input 1's values exist for it: optimizer state Keras 2 and 3 keep differently, an integer seed state.
      // A float model tensor without a partner was refused above.
      entry.action = Action::copy_first;
      entry.copy_from = 0;
    } else {
      for (std::size_t k = 1; k < inputs.size(); ++k) entry.source.push_back(source[k][i]);
      if (refused_by_policy(entry, options)) problems.push_back({first.path(), refusal(entry)});
    }
    plan.entries.push_back(std::move(entry));
  }
  if (!problems.empty()) {
    lead_with_summaries(inputs, tally, problems);
    throw Error(ExitCode::incompatible, std::move(problems));
  }
  if (plan.entries.empty())
    throw Error(ExitCode::incompatible, first.path(), "no tensor is left after --include / --exclude");
  link_aliases(plan);
  return plan;
}

}  // namespace wavg
