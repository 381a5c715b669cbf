#pragma once
// The CPU kernels' element access (element_math.hpp's load and store, inlined into each kernel's loop, shared with
// the CUDA kernels) and the dispatch from a run-time dtype to them.

#include <cstdint>

#include "wavg/dispatch_float.hpp"
#include "wavg/dtype.hpp"
#include "wavg/element_math.hpp"
#include "wavg/error.hpp"

namespace wavg::cpu {

// Below this many elements a parallel region costs more than it saves.
constexpr std::uint64_t k_parallel_threshold = 1 << 15;

// The loops that cost many instructions per element (sorting networks, Philox masks, sign consensus) hand out
// pieces of about this many elements to whichever thread is free, rather than dividing the elements evenly up
// front: on a machine whose other cores are busy, an evenly divided loop waits for its descheduled worker, and the
// default thread count ran slower than -j1 (issue 43). An element's result does not depend on its thread, so the
// bits are the same; the memory-bound mean keeps its even division (its workers finish together).
constexpr std::int64_t k_dynamic_elements = 1 << 14;

// Hot inner loops are compiled for AVX-512, AVX2 and the SSE2 baseline, and the loader picks one (GCC function
// multi-versioning): x86-64 machines differ in vector width. Every lane does the same IEEE operations in the same
// order as the scalar code (no FMA: -ffp-contract=off), so all versions give the same bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define WAVG_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define WAVG_CLONES
#endif

// float and double at any byte address, for the loops over float32 and float64 inputs: readers lend elements where
// the file holds them (load in element_math.hpp says why), and an aligned(1) type makes each load an unaligned one,
// with no undefined behaviour; GCC emits the same vector code for it (vcvtps2pd and vmovupd take any address).
// Index them only in functions that are not templates: GCC loses the attribute when the type is reached through a
// template parameter or deduced (`auto`) inside a template, and the load is then an aligned float's again.
typedef float LooseF32 __attribute__((aligned(1)));
typedef double LooseF64 __attribute__((aligned(1)));

// Shared with the CUDA kernels (element_math.hpp).
using wavg::load;
using wavg::Storage;
using wavg::store;
using wavg::update_at;

// The federated formulas' accessor (element_math.hpp) over a block's N inputs of dtype T, one pointer each.
template <DType T>
struct Updates {
  const void* const* data;
  const void* base;
  std::uint32_t count;
  std::uint32_t n() const { return count; }
  double update(std::uint32_t k, std::uint64_t i) const { return update_at<T>(data[k], base, i); }
};

using wavg::dispatch_float;

}  // namespace wavg::cpu
