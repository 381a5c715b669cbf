#include "wavg/plan.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "mismatch_tally.hpp"
#include "wavg/error.hpp"

namespace wavg {

std::size_t Plan::count(Action action) const {
  std::size_t n = 0;
  for (const auto& e : entries) n += e.action == action;
  return n;
}

std::uint64_t Plan::values(Action action) const {
  std::uint64_t n = 0;
  for (const auto& e : entries)
    if (e.action == action) n += e.info.count();
  return n;
}

namespace {

using NameIndex = std::unordered_map<std::string_view, std::size_t>;

NameIndex index_by_name(const Reader& reader) {
  NameIndex index;
  const auto& tensors = reader.tensors();
  for (std::size_t i = 0; i < tensors.size(); ++i) index.emplace(tensors[i].name, i);
  return index;
}

}  // namespace

bool passes_filters(const std::string& name, const PlanOptions& options) {
  auto matches = [&name](const std::string& pattern) { return ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0; };
  if (!options.include.empty() && std::none_of(options.include.begin(), options.include.end(), matches)) return false;
  return std::none_of(options.exclude.begin(), options.exclude.end(), matches);
}

RolesInFile roles_in(const std::vector<TensorInfo>& tensors) {
  const bool some = std::any_of(tensors.begin(), tensors.end(),
                                [](const TensorInfo& t) { return t.role != Role::unknown && t.role != Role::alias; });
  return some ? RolesInFile::some : RolesInFile::none;
}

Role resolve_role(const TensorInfo& t, bool* by_name, RolesInFile roles) {
  if (by_name) *by_name = t.role_by_rule;
  if (t.role != Role::unknown) return t.role;
  const bool batches = t.name.ends_with("num_batches_tracked") && !is_float(t.dtype);
  if (!is_optimizer_state(t.name) && !batches) {
    if (by_name) *by_name = roles == RolesInFile::some;
    return Role::weight;
  }
  if (by_name) *by_name = true;
  if (batches) return Role::counter;
  if (!t.shape.empty()) return Role::optimizer_state;
  return is_float(t.dtype) ? Role::hyper_parameter : Role::counter;
}

namespace {

Action by_policy(const PlanOptions& options) {
  return options.int_policy == IntPolicy::equal ? Action::check_equal : Action::copy_first;
}

}  // namespace

// Tells whether --int-policy error refuses the entry: what follows the policy (rng states and optimizer state kept
// by --optimizer-state first do not).
bool refused_by_policy(const PlanEntry& e, const PlanOptions& options) {
  if (options.int_policy != IntPolicy::error || e.action == Action::average) return false;
  if (e.info.role == Role::rng || e.info.role == Role::constant) return false;
  return !(e.info.role == Role::optimizer_state && is_float(e.info.dtype));
}

std::string refusal(const PlanEntry& e) {
  const bool by_role = e.info.role == Role::hyper_parameter || e.info.role == Role::counter;
  const std::string what =
      by_role ? std::string(name_of(k_role_names, e.info.role)) : std::string(dtype_name(e.info.dtype)) + " tensor";
  return e.info.name + ": " + what + " cannot be averaged (--int-policy error)";
}

Action action_for(const TensorInfo& t, Role role, const PlanOptions& options) {
  switch (role) {
    case Role::rng:
    case Role::constant: return Action::copy_first;
    case Role::hyper_parameter:
    case Role::counter: return by_policy(options);
    case Role::optimizer_state:
      if (is_float(t.dtype) && options.optimizer_state == OptimizerState::first) return Action::copy_first;
      [[fallthrough]];
    default: return is_float(t.dtype) ? Action::average : by_policy(options);
  }
}

namespace {

// Sets the entry's action, and the input it copies from, for its resolved role.
void settle_action(PlanEntry& e, const PlanOptions& options) {
  const Role role = e.info.role;
  e.action = action_for(e.info, role, options);
  e.copy_from = 0;
  if (e.action == Action::copy_first && options.newest_input != k_no_input &&
      (role == Role::hyper_parameter || role == Role::counter))
    e.copy_from = options.newest_input;
}

}  // namespace

PlanEntry plan_entry(const TensorInfo& t, std::size_t i, const PlanOptions& options, RolesInFile roles) {
  bool by_name = false;
  const Role role = resolve_role(t, &by_name, roles);
  PlanEntry e{t, {i}, Action::average};
  e.info.role = role;
  e.role_by_name = by_name;
  settle_action(e, options);
  return e;
}

bool dropped_by_options(Role role, const PlanOptions& options) {
  return role == Role::optimizer_state && options.optimizer_state == OptimizerState::drop;
}

// Tells whether `t` is an alias of a tensor --optimizer-state drop left out (listed before it): it goes too.
bool tied_to_dropped(const TensorInfo& t, const Plan& plan) {
  return !t.alias_of.empty() && std::find(plan.optimizer_dropped.begin(), plan.optimizer_dropped.end(), t.alias_of) !=
                                    plan.optimizer_dropped.end();
}

std::string role_phrase(Role role, std::size_t n) {
  static constexpr std::array<const char*, 13> k_plural{
      "tensors of unknown role", "weights",        "buffers",          "optimizer moments",
      "hyper-parameters",        "counters",       "rng states",       "aliases",
      "LoRA A factors",          "LoRA B factors", "DoRA magnitudes",  "saved modules",
      "graph constants"};
  static constexpr std::array<const char*, 13> k_single{
      "tensor of unknown role", "weight",        "buffer",          "optimizer moment",
      "hyper-parameter",        "counter",       "rng state",       "alias",
      "LoRA A factor",          "LoRA B factor", "DoRA magnitude",  "saved module",
      "graph constant"};
  static_assert(k_plural.size() == std::size(k_role_names) && k_single.size() == std::size(k_role_names));
  const auto r = static_cast<std::size_t>(role);
  return std::to_string(n) + " " + (n == 1 ? k_single[r] : k_plural[r]);
}

namespace {

// Settles which names stay tied in the output. A name every input holding it ties to the same tensor stays an alias
// (a PyTorch output from a PyTorch input 1 keeps the shared storage); where inputs disagree (one ties emb.weight and
// out.weight, another holds them apart with their own values) each name gets its own mean, so the output must hold
// them apart: info.alias_of is cleared and a writer that cannot (a PyTorch template's shared storage) refuses.
void check_ties(const std::vector<Reader*>& inputs, const PlanOptions& options, Plan& plan) {
  std::unordered_map<std::string_view, std::size_t> entry_of;
  for (std::size_t e = 0; e < plan.entries.size(); ++e) entry_of.emplace(plan.entries[e].info.name, e);
  for (PlanEntry& e : plan.entries) {
    std::string disagree;
    for (std::size_t k = 0; k < e.source.size() && disagree.empty(); ++k) {
      const TensorInfo& found = inputs[k]->tensors()[e.source[k]];
      const std::string& tie = found.name == e.info.name ? found.alias_of : e.info.alias_of;
      if (tie != e.info.alias_of) {
        const std::string& other = tie.empty() ? e.info.alias_of : tie;
        const std::size_t tied = tie.empty() ? 0 : k, apart = tie.empty() ? k : 0;
        disagree = e.info.name + " and " + other + " share one storage in " + inputs[tied]->path() + " but not in " +
                   inputs[apart]->path() + ": the output holds them apart, each with its own mean";
      }
    }
    if (!disagree.empty()) plan.warnings.push_back(disagree);
    if (e.info.alias_of.empty() || (disagree.empty() && entry_of.contains(e.info.alias_of))) continue;
    // Written apart: the tensor takes its target's role (input 1's), and the action that role gets.
    bool by_name = false;
    const auto target = entry_of.find(e.info.alias_of);
    const auto in_first = std::find_if(inputs[0]->tensors().begin(), inputs[0]->tensors().end(),
                                       [&](const TensorInfo& t) { return t.name == e.info.alias_of; });
    e.info.role = target != entry_of.end() ? plan.entries[target->second].info.role
                  : in_first != inputs[0]->tensors().end()
                      ? resolve_role(*in_first, &by_name, roles_in(inputs[0]->tensors()))
                      : Role::weight;
    if (e.info.role == Role::alias) e.info.role = Role::weight;
    e.role_by_name = by_name;
    e.info.alias_of.clear();
    settle_action(e, options);
  }
}

}  // namespace

// An alias whose tie is kept is the same tensor as its target: it takes the target's action and, through same_as,
// its result, so a method that draws per name (DARE's masks) or a shared storage written twice cannot part them.
void link_aliases(Plan& plan) {
  std::unordered_map<std::string_view, std::size_t> entry_of;
  for (std::size_t e = 0; e < plan.entries.size(); ++e) entry_of.emplace(plan.entries[e].info.name, e);
  for (PlanEntry& e : plan.entries) {
    if (e.info.alias_of.empty()) continue;
    const auto target = entry_of.find(e.info.alias_of);
    if (target == entry_of.end()) continue;
    const PlanEntry& t = plan.entries[target->second];
    WAVG_ASSERT(t.same_as == k_no_entry);
    e.same_as = target->second;
    e.action = t.action;
    e.copy_from = t.copy_from;
  }
}

// In plan_order.cpp: pairing by position (--match order), and whether it would succeed.
Plan build_plan_by_order(const std::vector<Reader*>& inputs, const PlanOptions& options);
bool pairs_by_order(const std::vector<Reader*>& inputs);

namespace {

// Tells whether the engine reads a tensor that input 1 stores as `want` from an input that stores it as `found`.
bool converts(DType want, DType found, const PlanOptions& options) {
  return options.float_dtypes == FloatDTypes::mixed && is_float(want) && is_float(found);
}

std::string float_against_integer(const TensorInfo& want, const TensorInfo& found) {
  return is_float(want.dtype) != is_float(found.dtype) ? " (a float tensor is not averaged with an integer one)" : "";
}

// The narrowest dtype holding every value of both exactly: float16 and bfloat16 values are all float32 values.
DType holding_both(DType a, DType b) {
  if (a == b) return a;
  return a == DType::f64 || b == DType::f64 ? DType::f64 : DType::f32;
}

// A tensor stored in other float dtypes than input 1's (FloatDTypes::mixed) is averaged from every input's exact
// values (read in a dtype holding them all, the engine converting) and written in input 1's dtype, rounded once, as
// --out-dtype would; a tensor that is not averaged (a hyper-parameter) is read in input 1's dtype, the engine
// converting the others'. -v says so for the averaged ones, one line per input and pair of dtypes.
void read_mixed_floats(const std::vector<Reader*>& inputs, Plan& plan) {
  struct Seen {
    std::size_t count = 0;
    std::string first;
  };
  std::map<std::tuple<std::size_t, std::string, std::string>, Seen> seen;
  for (PlanEntry& e : plan.entries) {
    if (e.action != Action::average) continue;
    DType read = e.info.dtype;
    for (std::size_t k = 1; k < inputs.size(); ++k) {
      const TensorInfo& other = inputs[k]->tensors()[e.source[k]];
      // Types of a format's own (GGUF's Q8_0 and Q4_0, both read as float32) differ as dtypes do.
      if (other.dtype == e.out_dtype && other.stored_as == e.info.stored_as) continue;
      Seen& s = seen[{k, stored_name(e.info), stored_name(other)}];
      if (s.count++ == 0) s.first = e.info.name;
      read = holding_both(read, other.dtype);
    }
    e.info.dtype = read;
  }
  for (const auto& [key, s] : seen) {
    const auto& [k, want, found] = key;
    plan.notes.push_back(inputs[k]->path() + ": " + std::to_string(s.count) + " tensor" + (s.count == 1 ? "" : "s") +
                         " (" + s.first + (s.count == 1 ? "" : ", ...") + ") stored as " +
                         found + " where " + inputs[0]->path() + " stores " + want +
                         ": averaged from every input's exact values, written as " + want +
                         " (input 1's dtype) unless --out-dtype is given");
  }
}

// Puts first one line per input that has no tensor name in common with input 1: a different model (or another
// framework's naming of it), said with each one's format and layout before a report of every tensor.
void lead_with_different_models(const std::vector<Reader*>& inputs, const std::vector<NameIndex>& indexes,
                                std::vector<Problem>& problems) {
  const Reader& first = *inputs.front();
  const auto kind = [](const Reader& r) {
    return r.layout() == r.format_name() ? r.layout() : r.format_name() + ", " + r.layout();
  };
  std::vector<Problem> lead;
  for (std::size_t k = 1; k < inputs.size(); ++k) {
    const Reader& other = *inputs[k];
    if (other.tensors().empty() || first.tensors().empty() ||
        std::any_of(other.tensors().begin(), other.tensors().end(),
                    [&](const TensorInfo& t) { return indexes[0].contains(t.name); }))
      continue;
    lead.push_back({other.path(), "a different model from " + first.path() + ": no tensor name in common (" +
                                      first.path() + ": " + kind(first) + "; " + other.path() + ": " + kind(other) +
                                      ")"});
  }
  problems.insert(problems.begin(), lead.begin(), lead.end());
}

// Whether `t` belongs to an optimizer: its per-parameter state, its hyper-parameters, or its step counter (a
// counter elsewhere, such as num_batches_tracked, is the model's).
bool of_optimizer(const TensorInfo& t, RolesInFile roles) {
  const Role r = resolve_role(t, nullptr, roles);
  return r == Role::optimizer_state || r == Role::hyper_parameter ||
         (r == Role::counter && is_optimizer_state(t.name));
}

// Returns, per input, whether only its optimizer differs from input 1's: an optimizer tensor one of them lacks, or
// of another shape or dtype (Adam beside SGD, two Keras files saved with different optimizers), while every other
// tensor pairs with one of the same shape and dtype. Inputs of different models get the usual report, which names
// what differs in the model itself. Input 1's entry is false.
std::vector<bool> optimizers_differ(const std::vector<Reader*>& inputs, const std::vector<NameIndex>& indexes) {
  std::vector<bool> differ(inputs.size(), false);
  const Reader& first = *inputs.front();
  const RolesInFile roles = roles_in(first.tensors());
  for (std::size_t k = 1; k < inputs.size(); ++k) {
    const RolesInFile roles_k = roles_in(inputs[k]->tensors());
    bool optimizer_differs = false, model_differs = false;
    for (const TensorInfo& t : first.tensors()) {
      const auto it = indexes[k].find(t.name);
      const TensorInfo* found = it == indexes[k].end() ? nullptr : &inputs[k]->tensors()[it->second];
      const bool same = found && found->shape == t.shape && same_element_type(*found, t);
      (of_optimizer(t, roles) ? optimizer_differs : model_differs) |= !same;
    }
    for (const TensorInfo& t : inputs[k]->tensors())
      if (!indexes[0].contains(t.name)) (of_optimizer(t, roles_k) ? optimizer_differs : model_differs) = true;
    differ[k] = optimizer_differs && !model_differs;
  }
  return differ;
}

// The line that leads the mismatch report when optimizers differ, saying what the flag does.
Problem optimizers_differ_problem(const Reader& first, const Reader& other) {
  return {other.path(), "its optimizer differs from " + first.path() +
                            "'s (optimizer tensors missing, extra or of other shapes): --optimizer-state first keeps "
                            "input 1's optimizer state, drop leaves it out"};
}

}  // namespace

namespace {

// Refuses to average an adapter's LoRA factors tensor by tensor: mean(B_i A_i) is not mean(B_i) mean(A_i), so the
// result would be no client's update nor their mean, and nothing would say so. merge hands adapters to the LoRA
// aggregation (lora_merge.hpp) before planning; the other subcommands that plan several inputs meet this.
void check_lora_factors(const Reader& first) {
  if (!first.lora_adapter() || first.lora_adapter()->modules.empty()) return;
  throw Error(ExitCode::usage, first.path(),
              "a LoRA adapter: averaging its factors A and B each on its own is not the mean of the adapters' updates "
              "(mean(B*A) differs from mean(B)*mean(A)); wavg merge aggregates adapter folders (--lora)");
}

// Says so when plain files hold LoRA factors by their names (adapter_model.safetensors given alone): they are
// averaged as tensors, which is FedIT's factor-wise mean, not the mean update.
void warn_plain_lora_factors(const std::vector<Reader*>& inputs, Plan& plan) {
  if (inputs.size() < 2) return;
  for (const PlanEntry& e : plan.entries)
    if (e.action == Action::average && e.info.role == Role::weight &&
        (e.info.name.ends_with(".lora_A.weight") || e.info.name.ends_with(".lora_B.weight"))) {
      plan.warnings.push_back(e.info.name + " and the other LoRA factors are averaged as plain tensors, A and B each "
                              "on its own: that is not the mean of the adapters' updates (mean(B*A) differs from "
                              "mean(B)*mean(A)); wavg merge of the adapter folders gives the mean update (--lora)");
      return;
    }
}

}  // namespace

Plan build_plan(const std::vector<Reader*>& inputs, const PlanOptions& options) {
  WAVG_ASSERT(!inputs.empty());
  if (inputs.size() > 1) check_lora_factors(*inputs.front());
  const bool filtered = !options.include.empty() || !options.exclude.empty();
  if (options.match == Pairing::order) return build_plan_by_order(inputs, options);
  const Reader& first = *inputs.front();
  std::vector<Problem> problems;
  bool names_differ = false;  // some tensor is missing or extra: --match order may be the cure
  std::vector<NameIndex> indexes;
  for (const Reader* r : inputs) indexes.push_back(index_by_name(*r));

  // A tensor is kept when every input has it; `present` counts, per name of input 1, the inputs that do.
  Plan plan;
  std::unordered_map<std::string_view, bool> dropped_seen;
  auto drop = [&](const std::string& name, bool in_first) {
    if (dropped_seen.emplace(name, true).second) {
      plan.dropped.push_back(name);
      if (in_first) plan.dropped_from_first.push_back(name);
    }
  };
  // Left out by --include / --exclude: as if no input had it (an HDF5 or .keras output copied from input 1 unlinks
  // it like a dropped tensor).
  std::unordered_map<std::string_view, bool> excluded_seen;
  auto filtered_out = [&](const std::string& name, bool in_first) {
    if (passes_filters(name, options)) return false;
    if (excluded_seen.emplace(name, true).second) {
      plan.excluded.push_back(name);
      if (in_first) plan.dropped_from_first.push_back(name);
    }
    return true;
  };

  std::vector<MismatchTally> tally(inputs.size());
  const RolesInFile roles = roles_in(first.tensors());
  // Inputs saved with different optimizers: --optimizer-state first keeps input 1's whole optimizer, drop leaves
  // its state out and keeps its hyper-parameters and step, as for inputs with one optimizer; without either the
  // report leads with what differs (below).
  const std::vector<bool> differ = optimizers_differ(inputs, indexes);
  const bool some_differ = std::find(differ.begin(), differ.end(), true) != differ.end();
  const bool settle_optimizer = some_differ && options.optimizer_state != OptimizerState::average;
  for (std::size_t t = 0; t < first.tensors().size(); ++t) {
    const TensorInfo& want = first.tensors()[t];
    if (filtered_out(want.name, true)) continue;
    PlanEntry entry = plan_entry(want, t, options, roles);
    const bool optimizer = settle_optimizer && of_optimizer(want, roles);
    if (dropped_by_options(entry.info.role, options) || tied_to_dropped(want, plan)) {
      plan.optimizer_dropped.push_back(want.name);
      plan.dropped_from_first.push_back(want.name);
      continue;
    }
    if (optimizer) {  // input 1's values only: its state (first), its hyper-parameters and step (first or drop)
      entry.action = Action::copy_first;
      entry.copy_from = 0;
      if (refused_by_policy(entry, options)) problems.push_back({first.path(), refusal(entry)});
      plan.entries.push_back(std::move(entry));
      continue;
    }
    bool missing_somewhere = false;
    for (std::size_t k = 1; k < inputs.size(); ++k) {
      const Reader& other = *inputs[k];
      auto it = indexes[k].find(want.name);
      // A tied copy another input leaves out (safetensors drops lm_head.weight, tied to the embedding): that
      // input's value for it is its target's.
      if (it == indexes[k].end() && !want.alias_of.empty()) {
        it = indexes[k].find(want.alias_of);
        if (it != indexes[k].end())
          plan.notes.push_back(want.name + ": absent from " + other.path() + ", which holds " + want.alias_of +
                               ", the tensor it is tied to in " + first.path());
      }
      if (it == indexes[k].end()) {
        missing_somewhere = true;
        if (options.tensors == TensorMatch::strict) {
          tally[k].add(problems, {other.path(), want.name + ": missing (present in " + first.path() + ")"},
                       Mismatch::names);
          names_differ = true;
        }
        continue;
      }
      const TensorInfo& found = other.tensors()[it->second];
      if (stored_shape(found) != stored_shape(want))
        tally[k].add(problems,
                     {other.path(), want.name + ": expected shape " + shape_string(stored_shape(want)) + ", found " +
                                        shape_string(stored_shape(found))},
                     Mismatch::shapes);
      if (!same_element_type(found, want) &&
          (found.numbers != want.numbers || !converts(want.dtype, found.dtype, options)))
        tally[k].add(problems,
                     {other.path(), want.name + ": expected dtype " + element_type_name(want) + ", found " +
                                        element_type_name(found) + float_against_integer(want, found)},
                     Mismatch::dtypes);
      tally[k].end_tensor();
      entry.source.push_back(it->second);
    }
    if (missing_somewhere) {
      drop(want.name, true);
      continue;
    }
    if (refused_by_policy(entry, options)) problems.push_back({first.path(), refusal(entry)});
    plan.entries.push_back(std::move(entry));
  }

  for (std::size_t k = 1; k < inputs.size(); ++k) {
    const RolesInFile roles_k = roles_in(inputs[k]->tensors());
    for (const TensorInfo& extra : inputs[k]->tensors()) {
      if (indexes[0].contains(extra.name) || filtered_out(extra.name, false)) continue;
      if (settle_optimizer && of_optimizer(extra, roles_k)) continue;  // not input 1's optimizer: not in the output
      if (!extra.alias_of.empty() && indexes[0].contains(extra.alias_of)) {
        plan.notes.push_back(extra.name + ": left out, as " + first.path() + " holds it only as " + extra.alias_of +
                             " (tied in " + inputs[k]->path() + ")");
        continue;
      }
      if (options.tensors == TensorMatch::strict) {
        tally[k].add(problems, {inputs[k]->path(), extra.name + ": not in " + first.path()}, Mismatch::extra);
        names_differ = true;
      } else {
        drop(extra.name, false);
      }
    }
  }

  check_ties(inputs, options, plan);
  link_aliases(plan);
  // Models whose files name different architectures (GGUF's general.architecture: llama beside qwen2, whose
  // tensors llama.cpp names alike) do not pair, whatever their tensors.
  for (std::size_t k = 1; k < inputs.size(); ++k) {
    const std::string mine = inputs[k]->architecture(), first_arch = first.architecture();
    if (!mine.empty() && !first_arch.empty() && mine != first_arch)
      problems.insert(problems.begin(), {inputs[k]->path(), "architecture " + mine + ", where " + first.path() +
                                                                 " is " + first_arch});
  }
  if (!problems.empty()) {
    const std::size_t details = problems.size();
    lead_with_summaries(inputs, tally, problems);
    // The hint leads: a Keras 2 vs Keras 3 comparison lists every tensor of both files below it.
    if (some_differ && !settle_optimizer) {
      std::vector<Problem> lead;
      for (std::size_t k = 1; k < inputs.size(); ++k)
        if (differ[k]) lead.push_back(optimizers_differ_problem(first, *inputs[k]));
      problems.insert(problems.begin(), lead.begin(), lead.end());
    } else if (names_differ && pairs_by_order(inputs))
      problems.insert(problems.begin(),
                      {first.path(),
                       std::to_string(details) +
                           " tensor names differ (listed below), but every input's model tensors pair up with these by "
                           "position, with equal shapes: --match order would pair them"});
    else
      lead_with_different_models(inputs, indexes, problems);
    throw Error(ExitCode::incompatible, std::move(problems));
  }
  read_mixed_floats(inputs, plan);
  warn_plain_lora_factors(inputs, plan);
  if (plan.entries.empty() && filtered)
    throw Error(ExitCode::incompatible, first.path(), "no tensor is left after --include / --exclude");
  if (plan.entries.empty()) {
    problems.push_back({first.path(), "no tensor is common to all inputs; nothing to merge"});
    lead_with_different_models(inputs, indexes, problems);
    throw Error(ExitCode::incompatible, std::move(problems));
  }
  return plan;
}

std::vector<std::size_t> match_base(const Plan& plan, const Reader& base) {
  const NameIndex index = index_by_name(base);
  std::vector<std::size_t> source(plan.entries.size(), 0);
  std::vector<Problem> problems;
  for (std::size_t e = 0; e < plan.entries.size(); ++e) {
    const TensorInfo& want = plan.entries[e].info;
    if (plan.entries[e].action != Action::average) continue;
    auto it = index.find(want.name);
    if (it == index.end()) {
      problems.push_back({base.path(), want.name + ": missing from the base (--base)"});
      continue;
    }
    const TensorInfo& found = base.tensors()[it->second];
    if (stored_shape(found) != stored_shape(want))
      problems.push_back({base.path(), want.name + ": expected shape " + shape_string(stored_shape(want)) +
                                           ", found " + shape_string(stored_shape(found))});
    // The engine reads the base in the entry's dtype, converting a float one (FloatDTypes::mixed).
    if (!is_float(found.dtype) || found.numbers != want.numbers)
      problems.push_back({base.path(), want.name + ": expected " + (want.numbers == Numbers::complex ? "" : "a float dtype (") +
                                           element_type_name(want) + (want.numbers == Numbers::complex ? "" : ")") + ", found " + element_type_name(found)});
    source[e] = it->second;
  }
  if (!problems.empty()) throw Error(ExitCode::incompatible, std::move(problems));
  return source;
}

void set_out_dtype(Plan& plan, DType dtype) {
  WAVG_ASSERT(is_float(dtype));
  for (PlanEntry& e : plan.entries) {
    if (e.action != Action::average) continue;
    // Complex numbers come in float32 or float64 parts only (numpy, h5py and torch have no complex of halves).
    if (e.info.numbers == Numbers::complex && dtype != DType::f32 && dtype != DType::f64)
      fail_usage("--out-dtype " + std::string(dtype_name(dtype)) + ": " + e.info.name + " is " +
                 element_type_name(e.info) + ", whose parts are float32 or float64 (--out-dtype float32 writes " +
                 "complex64, float64 complex128)");
    e.out_dtype = dtype;
  }
}

std::vector<TensorInfo> output_tensors(const Plan& plan) {
  std::vector<TensorInfo> out;
  out.reserve(plan.entries.size());
  for (const PlanEntry& e : plan.entries) {
    out.push_back(e.info);
    out.back().dtype = e.out_dtype;
  }
  return out;
}

}  // namespace wavg
