#include "wavg/plan.hpp"

#include <fnmatch.h>

#include <algorithm>
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
  if (!options.include.empty() && std::none_of(options.include.begin(), options.include.end(), matches))
    return false;
  return std::none_of(options.exclude.begin(), options.exclude.end(), matches);
}

bool is_optimizer_hyperparameter(const TensorInfo& t) {
  return is_float(t.dtype) && t.shape.empty() && is_optimizer_state(t.name);
}

Action action_for(const TensorInfo& t, const PlanOptions& options) {
  if (is_float(t.dtype) && !is_optimizer_hyperparameter(t)) return Action::average;
  return options.int_policy == IntPolicy::equal ? Action::check_equal : Action::copy_first;
}

// In plan_order.cpp: pairing by position (--match order), and whether it would succeed.
Plan build_plan_by_order(const std::vector<Reader*>& inputs, const PlanOptions& options);
bool pairs_by_order(const std::vector<Reader*>& inputs);

namespace {

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

}  // namespace

Plan build_plan(const std::vector<Reader*>& inputs, const PlanOptions& options) {
  WAVG_ASSERT(!inputs.empty());
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
  for (std::size_t t = 0; t < first.tensors().size(); ++t) {
    const TensorInfo& want = first.tensors()[t];
    if (filtered_out(want.name, true)) continue;
    PlanEntry entry{want, {t}, action_for(want, options)};
    bool missing_somewhere = false;
    for (std::size_t k = 1; k < inputs.size(); ++k) {
      const Reader& other = *inputs[k];
      auto it = indexes[k].find(want.name);
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
      if (found.shape != want.shape)
        tally[k].add(problems, {other.path(), want.name + ": expected shape " + shape_string(want.shape) +
                                                  ", found " + shape_string(found.shape)},
                     Mismatch::shapes);
      if (found.dtype != want.dtype)
        tally[k].add(problems, {other.path(), want.name + ": expected dtype " + std::string(dtype_name(want.dtype)) +
                                                  ", found " + std::string(dtype_name(found.dtype))},
                     Mismatch::dtypes);
      tally[k].end_tensor();
      entry.source.push_back(it->second);
    }
    if (missing_somewhere) {
      drop(want.name, true);
      continue;
    }
    if (entry.action != Action::average && options.int_policy == IntPolicy::error)
      problems.push_back({first.path(), want.name + ": " + std::string(dtype_name(want.dtype)) +
                                            " tensor cannot be averaged (--int-policy error)"});
    plan.entries.push_back(std::move(entry));
  }

  for (std::size_t k = 1; k < inputs.size(); ++k) {
    for (const TensorInfo& extra : inputs[k]->tensors()) {
      if (indexes[0].contains(extra.name) || filtered_out(extra.name, false)) continue;
      if (options.tensors == TensorMatch::strict) {
        tally[k].add(problems, {inputs[k]->path(), extra.name + ": not in " + first.path()}, Mismatch::extra);
        names_differ = true;
      } else {
        drop(extra.name, false);
      }
    }
  }

  if (!problems.empty()) {
    const std::size_t details = problems.size();
    lead_with_summaries(inputs, tally, problems);
    // The hint leads: a Keras 2 vs Keras 3 comparison lists every tensor of both files below it.
    if (names_differ && pairs_by_order(inputs))
      problems.insert(problems.begin(),
                      {first.path(), std::to_string(details) +
                                         " tensor names differ (listed below), but every input's model tensors pair up with these by "
                                         "position, with equal shapes: --match order would pair them"});
    else lead_with_different_models(inputs, indexes, problems);
    throw Error(ExitCode::incompatible, std::move(problems));
  }
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
    if (found.shape != want.shape)
      problems.push_back({base.path(), want.name + ": expected shape " + shape_string(want.shape) + ", found " +
                                           shape_string(found.shape)});
    if (found.dtype != want.dtype)
      problems.push_back({base.path(), want.name + ": expected dtype " + std::string(dtype_name(want.dtype)) +
                                           ", found " + std::string(dtype_name(found.dtype))});
    source[e] = it->second;
  }
  if (!problems.empty()) throw Error(ExitCode::incompatible, std::move(problems));
  return source;
}

void set_out_dtype(Plan& plan, DType dtype) {
  WAVG_ASSERT(is_float(dtype));
  for (PlanEntry& e : plan.entries)
    if (e.action == Action::average) e.out_dtype = dtype;
}

std::vector<TensorInfo> output_tensors(const Plan& plan) {
  std::vector<TensorInfo> out;
  out.reserve(plan.entries.size());
  for (const PlanEntry& e : plan.entries) out.push_back({e.info.name, e.out_dtype, e.info.shape});
  return out;
}

}  // namespace wavg
