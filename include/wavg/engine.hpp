#pragma once
// The streaming engine: every tensor is processed in blocks of at most a few MiB per input, so memory stays flat
// for any model size. Block order and the per-element summation order do not depend on the thread count.

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "wavg/error.hpp"
#include "wavg/format.hpp"
#include "wavg/method.hpp"
#include "wavg/plan.hpp"

namespace wavg {

// Returns the ends of the blocks a tensor of `count` elements is streamed in, ascending, the last one `count`.
// Blocks are `step` elements (the last one shorter), each cut further where the inputs' pieces meet
// (`boundaries`, Reader::boundaries of every input, in any order), but only at the elements where a reduction chunk
// (k_reduce_chunk elements from a step's start) begins: the reductions see the same chunks, summed in the same
// order, as without boundaries. So a boundary that falls inside a chunk ends one block where that chunk begins and
// the next where it ends: the chunk alone straddles the two pieces, and only it is copied.
std::vector<std::uint64_t> block_ends(std::uint64_t count, std::uint64_t step, std::vector<std::uint64_t> boundaries);

class Engine {
 public:
  Engine(const Plan& plan, std::vector<Reader*> inputs, Method& method, Backend& backend,
         std::uint64_t block_bytes = k_default_block_bytes);

  // Streams `base` (the global model) alongside the inputs for averaged tensors: `source[e]` is plan entry e's
  // index in base->tensors() (see match_base). The method sees it as BlockInputs::base.
  void set_base(Reader* base, std::vector<std::size_t> source);

  // Restricts run(), and verify()'s comparison of values that must be equal, to one rank's share of a distributed
  // merge: per plan entry, the elements [first, second) it computes and writes (first == second: none). The
  // method's passes (verify) still see every value, as their results feed every block.
  using ElementRange = std::pair<std::uint64_t, std::uint64_t>;
  void set_share(std::vector<ElementRange> share);
  // Returns the element nearest `wanted` (at most the entry's count) where a share of plan entry `index` may begin:
  // the start of a reduction chunk (and of a method's block unit) in the single-process blocks, so that a share's
  // blocks, cut there (block_ends), give every method's single-process results bit for bit.
  std::uint64_t share_cut(std::size_t index, std::uint64_t wanted) const;

  // Called after each block is read, with how far the current pass (verify's, or run's) is through the plan:
  // `done` of `total` bytes of one input (total > 0). Each pass starts again from 0.
  using ProgressFn = std::function<void(std::uint64_t done, std::uint64_t total)>;
  // Adds a listener of the engine's progress (the provenance's hash threads, the terminal's progress line).
  void on_progress(ProgressFn fn);

  // Runs everything that can fail on the inputs' values (--int-policy equal, the method's extra passes) before
  // any output exists. Throws Error(incompatible) listing every tensor that differs.
  void verify();
  // Streams every tensor through the method into the writer.
  void run(Writer& writer);

  // How the inputs' blocks were had so far, one count per input per block: lent by the reader (Reader::view) or
  // copied into the engine's buffers (read()). For tests and benchmarks of the readers' lending.
  struct BlockReads {
    std::uint64_t lent = 0, copied = 0;
  };
  BlockReads block_reads() const { return m_reads; }

  // Input buffer budget for one block across all inputs.
  static constexpr std::uint64_t k_default_block_bytes = 64ull << 20;

 private:
  std::uint64_t block_elements(const PlanEntry& entry) const;
  // Returns block_ends() for `entry`, with the boundaries of every input whose pieces are long enough to matter.
  std::vector<std::uint64_t> blocks(const PlanEntry& entry) const;
  // Returns the element range plan entry `index` streams (set_share; all of `entry` without one).
  ElementRange range(std::size_t index, const PlanEntry& entry) const;
  // Returns blocks() of `entry` cut at both ends of `range`.
  std::vector<std::uint64_t> blocks(const PlanEntry& entry, ElementRange range) const;
  // Reads one block of every input (the first `inputs`), and announces the next one unless it lies at `until` or
  // beyond (the end of this rank's share).
  void read_block(const PlanEntry& entry, std::uint64_t offset, std::uint64_t count, std::size_t inputs,
                  std::uint64_t until = UINT64_MAX);
  // Adds one problem per input whose current block (read_block) differs from input 1's, naming that input.
  void name_differing_inputs(const PlanEntry& entry, std::uint64_t offset, std::uint64_t count,
                             std::vector<Problem>& differ) const;
  BlockInputs block_view(const PlanEntry& entry, std::uint64_t count, std::size_t inputs);
  const void* read_base(const PlanEntry& entry, std::uint64_t offset, std::uint64_t count);
  bool read_converted(Reader& reader, std::size_t index, DType dtype, std::uint64_t offset, std::uint64_t count,
                      std::vector<double>& buffer);
  void release_block();
  // Throws Error(runtime) naming the tensor when the block just combined (m_out) holds a NaN or an infinity while
  // every input's values are finite: a weight too large for the values must not become a model of NaNs, exit 0.
  void check_finite(const PlanEntry& entry, std::uint64_t offset, std::uint64_t count);
  // Tells whether every averaged value of every input and of the base is finite (reads them all).
  bool inputs_finite();

  const Plan& m_plan;
  std::vector<Reader*> m_inputs;
  Reader* m_base = nullptr;
  std::vector<std::size_t> m_base_source;
  std::vector<double> m_base_buffer;
  Method& m_method;
  Backend& m_backend;
  std::uint64_t m_block_bytes;
  std::vector<std::vector<double>> m_buffers;  // one per input; double for alignment of any dtype
  std::vector<const void*> m_pointers;
  std::vector<double> m_out;
  std::vector<double> m_stored;  // a block as stored, before read_converted converts it
  std::vector<std::uint64_t> m_bytes_before;  // per plan entry, the bytes of the entries before it
  std::uint64_t m_total_bytes = 0;
  std::vector<ProgressFn> m_progress;
  std::vector<ElementRange> m_share;  // set_share(); empty: every element
  BlockReads m_reads;
  std::optional<bool> m_inputs_finite;  // inputs_finite(), once a block needed it
  struct Held {                         // the block whose views the readers have lent, given back before the next one
    const PlanEntry* entry = nullptr;
    std::uint64_t offset = 0, count = 0;
    std::size_t inputs = 0;
  } m_held;
};

}  // namespace wavg
