#pragma once
// A counter-based generator: the value depends only on the key and the counter, so a batch, an initial weight or a
// visiting order is the same however the work is scheduled, resumed or distributed. SplitMix64's finaliser as the
// mixing function. Used by the trainer (batches, shards) and by weight matching (the order it visits groups in).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wavg {

// Returns SplitMix64's output for state `x`: a bijection that mixes every input bit into every output bit.
std::uint64_t mix64(std::uint64_t x);
// Returns a key mixed from up to four numbers (a seed, a purpose tag, a round, ...).
std::uint64_t hash_key(std::uint64_t a, std::uint64_t b, std::uint64_t c = 0, std::uint64_t d = 0);
// Returns a uniform double in [0, 1).
inline double unit_double(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }
// Returns a permutation of 0..n-1 drawn from `key` (Fisher-Yates).
std::vector<std::size_t> permutation(std::size_t n, std::uint64_t key);

}  // namespace wavg
