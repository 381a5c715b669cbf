#pragma once
// A merge method turns one block of every input into one block of output. Methods that need statistics over the
// whole model first (distances between inputs, norms of updates) ask the engine for extra passes and see every
// block in each before combine() is called.

#include <memory>
#include <string>
#include <vector>

#include "wavg/backend.hpp"
#include "wavg/plan.hpp"

namespace wavg {

class Method {
 public:
  virtual ~Method() = default;
  virtual std::string describe() const = 0;
  // Tells whether the engine should run whole-model pass `pass` (0, 1, ...) through observe() before combine();
  // asked again after each pass, so a method can decide from what it saw how many passes it needs.
  virtual bool wants_pass(int /*pass*/) { return false; }
  // Tells whether pass `pass` needs this entry's blocks at all; the engine does not read those it need not.
  virtual bool observes(int /*pass*/, const PlanEntry&) { return true; }
  virtual void observe(int /*pass*/, const PlanEntry&, std::uint64_t /*offset*/, const BlockInputs&) {}
  // Runs after every block of pass `pass` was observed.
  virtual void end_pass(int /*pass*/) {}
  // Tells whether the method, given this entry whole in one block by combine(), takes from that block what its
  // passes would have seen: the engine then leaves such an entry out of the passes and reads it once (TIES, DARE).
  virtual bool settles_in_combine(const PlanEntry&) const { return false; }
  // Returns the number of elements every block of this entry must be a multiple of (blocks start at multiples of
  // it): a method that works on whole rows asks for one row (della); the engine gives it at least one such unit
  // per block, whatever the block budget.
  virtual std::uint64_t block_unit(const PlanEntry&) const { return 1; }
  // Writes the merged block, in the entry's dtype, to `out`.
  virtual void combine(const PlanEntry& entry, std::uint64_t offset, const BlockInputs& in, void* out) = 0;
  // Returns lines for the summary after the run (federated methods: clipping, selection, the server round).
  virtual std::vector<std::string> report() const { return {}; }
  // Returns one line per tensor an edge-case guard decided (TIES keeping one entry, model stock keeping the base),
  // each naming the tensor, for -v.
  virtual std::vector<std::string> decisions() const { return {}; }
};

// Returns the plain mean (empty weights) or the weighted mean, weights normalised by their sum. The weights must
// already be validated (validate_weights).
std::unique_ptr<Method> make_weighted_mean(Backend& backend, std::vector<double> weights);

// Checks a weight list against the number of inputs: right length, finite, non-negative, positive sum. Throws a
// usage error (exit 2) otherwise.
void validate_weights(const std::vector<double>& weights, std::size_t inputs);

}  // namespace wavg
