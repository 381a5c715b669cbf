#pragma once
// The options of permutation alignment, shared by wavg align and wavg merge --align weights, and the step that
// turns opened inputs into aligned ones. Kept apart so merge.cpp gains one option group and one call.

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "wavg/align.hpp"
#include "wavg/plan.hpp"

namespace wavg::cli {

struct AlignCli {
  std::string method = "none";  // merge --align: none or weights
  align::SpecSource spec;       // --perm-spec, --assume-sequential
  align::MatchOptions match;
};

// Which subcommand the options are for: merge adds --align and names the seed --align-seed (its --seed is the
// noise's); align names it --seed.
enum class AlignFor { align, merge };

// Adds --perm-spec, --assume-sequential, --align-iter, --align-restarts and the seed option (and --align for merge).
void add_align_options(CLI::App& app, AlignCli& a, AlignFor what);

// Refuses --align with federated inputs: it permutes models, not updates against a base.
void check_align_inputs(const AlignCli& a, bool updates);

struct Aligned {
  align::PermSpec spec;
  std::vector<std::unique_ptr<Reader>> readers;  // one per input, presenting its permuted tensors
  std::vector<Reader*> raw() const;
};

// Aligns `inputs` for averaging: two inputs by weight matching of input 2 to input 1, more by MergeMany; says what
// moved on stderr.
Aligned align_for_merge(const std::vector<Reader*>& inputs, const AlignCli& a, const Verbosity& v);

// Refuses a plan that would copy a permuted tensor from input 1's file instead of averaging the aligned values.
void check_aligned_plan(const Plan& plan, const Aligned& aligned);

// Returns "dense: 64 units, 61 moved" lines, one per group.
std::vector<std::string> describe_groups(const align::PermSpec& spec, const std::vector<align::Perm>& perms);

}  // namespace wavg::cli
