#pragma once
// The plan: inputs checked against input 1 (names, shapes, dtypes) and every tensor given an action. All mismatches
// are collected and thrown at once (exit 3), before anything is written.

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "wavg/format.hpp"
#include "wavg/names.hpp"

namespace wavg {

// What happens to non-float tensors (quantiser tables), hyper-parameters and counters (--int-policy).
enum class IntPolicy { first, equal, error };
// What happens to optimizer state, the per-parameter moments and slots (--optimizer-state).
enum class OptimizerState { average, first, drop };
// What happens to a tensor that some inputs lack.
enum class TensorMatch { strict, intersection };
// How tensors of different inputs are paired: by full name, or by position with shape checks (--match order), for
// checkpoints of one architecture whose names differ (Keras 2 vs Keras 3, auto layer names dense_3 vs dense).
enum class Pairing { name, order };
// Whether inputs may store one float tensor in different float dtypes (a client that trained in bfloat16 beside
// others in float32): `mixed` where the Engine reads the blocks (it converts them, PlanEntry::info.dtype); `equal`
// for a consumer that reads blocks itself (diff, the trainer's reduce).
enum class FloatDTypes { equal, mixed };

inline constexpr std::array<Named<IntPolicy>, 3> k_int_policy_names{
    {{"first", IntPolicy::first}, {"equal", IntPolicy::equal}, {"error", IntPolicy::error}}};
inline constexpr std::array<Named<OptimizerState>, 3> k_optimizer_state_names{
    {{"average", OptimizerState::average}, {"first", OptimizerState::first}, {"drop", OptimizerState::drop}}};
inline constexpr std::array<Named<TensorMatch>, 2> k_tensor_match_names{
    {{"strict", TensorMatch::strict}, {"intersection", TensorMatch::intersection}}};
inline constexpr std::array<Named<Pairing>, 2> k_pairing_names{{{"name", Pairing::name}, {"order", Pairing::order}}};

inline constexpr std::size_t k_no_input = static_cast<std::size_t>(-1);
inline constexpr std::size_t k_no_entry = static_cast<std::size_t>(-1);

struct PlanOptions {
  IntPolicy int_policy = IntPolicy::first;
  OptimizerState optimizer_state = OptimizerState::average;
  // The input a checkpoint sequence marks newest (--last, --schedule): its hyper-parameters and counters are kept
  // instead of input 1's (the run goes on from there). k_no_input outside a sequence: --int-policy decides.
  std::size_t newest_input = k_no_input;
  TensorMatch tensors = TensorMatch::strict;
  Pairing match = Pairing::name;
  FloatDTypes float_dtypes = FloatDTypes::equal;
  // --include / --exclude: shell-style patterns (fnmatch, where * also matches /) over tensor names. A tensor is
  // planned when it matches some include (or none were given) and no exclude; the others are left out of every
  // input before pairing, and listed in Plan::excluded.
  std::vector<std::string> include;
  std::vector<std::string> exclude;
};

// Tells whether --include / --exclude keep the tensor named `name`.
bool passes_filters(const std::string& name, const PlanOptions& options);

enum class Action {
  average,      // floating point: combined by the merge method
  copy_first,   // non-float under --int-policy first: input 1's values (PlanEntry::copy_from's, for a sequence)
  check_equal,  // non-float under --int-policy equal: must be identical in every input, then copied
};

struct PlanEntry {
  // Makes an entry whose output keeps the tensor's own dtype.
  PlanEntry(TensorInfo tensor, std::vector<std::size_t> sources, Action what)
      : info(std::move(tensor)), source(std::move(sources)), action(what), out_dtype(info.dtype) {}

  TensorInfo info;                  // as in input 1; info.role is resolved (never unknown), info.alias_of set while
                                    // every input that holds the tensor ties it to the same one; info.dtype is the
                                    // dtype the engine reads every input's blocks in (converting those stored in
                                    // another, FloatDTypes::mixed): input 1's, or for an averaged tensor stored in
                                    // several float dtypes one that holds them all exactly
  std::vector<std::size_t> source;  // the tensor's index in each input's tensors()
  Action action = Action::average;
  std::size_t copy_from = 0;  // copy_first: the input whose values are kept
  // An alias whose tie is kept: the entry of the tensor it names, whose result (action, values) it takes instead of
  // one of its own; k_no_entry for every other entry.
  std::size_t same_as = k_no_entry;
  bool role_by_name = false;  // the codec left the role unknown and the plan's last-resort rule decided it
  DType out_dtype;            // the output's dtype: input 1's, unless --out-dtype retypes an averaged tensor
};

struct Plan {
  std::vector<PlanEntry> entries;               // input 1's order
  std::vector<std::string> dropped;             // names left out under --tensors intersection (from any input)
  std::vector<std::string> dropped_from_first;  // the subset of `dropped` present in input 1, and `excluded` ones
  std::vector<std::string> excluded;            // names left out by --include / --exclude (from any input)
  std::vector<std::string> warnings;            // for stderr: what --match order could not pair, tied names apart
  std::vector<std::string> notes;               // for -v: tied copies some inputs leave out
  std::vector<std::string> optimizer_dropped;   // optimizer state left out by --optimizer-state drop
  std::vector<std::string> pairing;             // --match order: "A = B (FILE)", one line per paired tensor

  std::size_t count(Action action) const;
  std::uint64_t values(Action action) const;
};

// Checks every input against input 1 and builds the plan. Throws Error(incompatible) listing every mismatch.
Plan build_plan(const std::vector<Reader*>& inputs, const PlanOptions& options);

// Finds every averaged tensor of the plan in `base` (same name and shape, a float dtype) and returns, per plan entry, its
// index in base.tensors() (unused for entries that are not averaged). Throws Error(incompatible) listing every
// tensor that is missing or differs.
std::vector<std::size_t> match_base(const Plan& plan, const Reader& base);

// Tells whether a tensor is optimizer state (Keras optimizer_weights/ or optimizer/), which --match order pairs
// separately from the model's weights.
bool is_optimizer_state(const std::string& name);

// Whether a file's codec gave any of its tensors a role (an alias, storage identity, is no structure): where it did,
// one it left unknown lies outside the structure the codec understands, and the weight the last-resort rule makes of it
// is a guess to report; where it gave none (a safetensors file), every tensor is a weight by what the format holds.
enum class RolesInFile { none, some };
RolesInFile roles_in(const std::vector<TensorInfo>& tensors);

// Returns the role the codec gave `t`, or, when it left it unknown, the last-resort rule's (setting `by_name`): an
// integer num_batches_tracked is a counter; a tensor under optimizer/ or optimizer_weights/ is optimizer state, a
// float scalar there a hyper-parameter (averaging a learning-rate sweep's rates gives a rate no run used) and an
// integer one a counter; everything else is a weight (by name too in a file with RolesInFile::some).
Role resolve_role(const TensorInfo& t, bool* by_name = nullptr, RolesInFile roles = RolesInFile::none);

// Returns what happens to a tensor of role `role` under `options`: weights and buffers are averaged when float,
// optimizer state by --optimizer-state; hyper-parameters, counters and non-float tensors follow --int-policy; rng
// states are copied from input 1.
Action action_for(const TensorInfo& t, Role role, const PlanOptions& options);
// Tells whether `t` is an alias of a tensor that --optimizer-state drop left out of `plan`.
bool tied_to_dropped(const TensorInfo& t, const Plan& plan);
// Makes every alias whose target is in the plan take the target's action and result (PlanEntry::same_as).
void link_aliases(Plan& plan);
// Returns the entry for input 1's tensor `t` (index `i`): its resolved role and action.
PlanEntry plan_entry(const TensorInfo& t, std::size_t i, const PlanOptions& options,
                     RolesInFile roles = RolesInFile::none);
// Tells whether --optimizer-state drop leaves a tensor of this role out of the output.
bool dropped_by_options(Role role, const PlanOptions& options);
// Returns the role's name as a plural phrase for merge -v's summary ("3 optimizer moments").
std::string role_phrase(Role role, std::size_t n);

// Makes every averaged (floating-point) tensor come out as `dtype` (--out-dtype); values are rounded once.
void set_out_dtype(Plan& plan, DType dtype);
// Returns the output's tensors: the plan's names and shapes with each entry's output dtype.
std::vector<TensorInfo> output_tensors(const Plan& plan);

}  // namespace wavg
