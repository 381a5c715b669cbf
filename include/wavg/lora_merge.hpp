#pragma once
// Aggregating LoRA adapters into one adapter, each method saying what it computes (src/core/lora/lora_merge.cpp
// explains the algebra). The aggregate is a Reader of its own that computes each module's factors when they are
// first read, one module at a time, so a merge streams it to its output like any input.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wavg/format.hpp"

namespace wavg {

enum class LoraMethod {
  exact,       // the mean update, its factors stacked (rank: the sum of the clients' ranks)
  svd,         // the mean update re-factored to a chosen rank by truncated SVD
  factorwise,  // FedIT: A and B each averaged on its own, which is not the mean update
  frozen_a,    // FFA-LoRA: every client's A identical, only B averaged (exact)
};

// Whether the per-module notes that cost more than the merge itself (factorwise's relative error: two thin QR
// factorisations of every module) are computed; svd's discarded energy comes free with its SVD and is always noted.
enum class LoraNotes { cheap, all };

struct LoraMerge {
  LoraMethod method = LoraMethod::exact;
  std::uint64_t rank = 0;  // svd: the output's rank
  LoraNotes notes = LoraNotes::cheap;
};

// Parses --lora's value: exact (or stack), svd:R, factorwise, frozen-a. Throws a usage error (exit 2) otherwise.
LoraMerge parse_lora_merge(const std::string& text);
// Returns the method as --lora spells it ("exact", "svd:8").
std::string lora_merge_name(const LoraMerge& how);
// Tells whether the inputs are LoRA adapters (a PEFT folder's reader); refuses (usage error) adapters mixed with
// other inputs.
bool are_adapters(const std::vector<Reader*>& inputs);

// The aggregate of several adapters as one input. Its notes fill in as modules are computed: per module, the
// discarded energy (svd) or, with LoraNotes::all, the factor-wise mean's relative error (factorwise), for -v.
class LoraAggregate : public Reader {
 public:
  virtual const std::vector<std::string>& notes() const = 0;
  // Returns what the provenance and the report call the method ("LoRA exact (stacked factors, rank sum)").
  virtual std::string describe() const = 0;
};

// Checks the adapters against each other (their configs, modules and shapes, and what `how` needs: equal ranks
// and scales for factorwise and frozen-a, bit-identical A factors for frozen-a), listing every difference in one
// Error (exit 3) before anything is computed, and returns their aggregate. `weights`: one per adapter (empty:
// equal), normalised by their sum.
std::unique_ptr<LoraAggregate> aggregate_lora(const std::vector<Reader*>& adapters, std::vector<double> weights,
                                              const LoraMerge& how);

}  // namespace wavg
