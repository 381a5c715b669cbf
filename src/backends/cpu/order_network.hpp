#pragma once
// Selection networks for the order statistics of N values (median, trimmed mean), applied to a tile of elements
// at once.
//
// The scalar path sorts each element's N values by insertion: branchy, one element at a time. A comparator
// network instead does the same fixed sequence of compare-exchanges (min into the lower row, max into the upper)
// whatever the values, so it runs on k_tile elements side by side, each comparator one vector min and one max.
// Batcher's odd-even merge sort gives the network for any N (about N log^2 N / 4 comparators); the comparators that
// cannot reach the positions the statistic reads (the middle one or two for a median, [trim, N - trim) for a
// trimmed mean) are pruned, which leaves a selection network.
//
// A network is not a stable sort, but the scalar path's result depends only on the sorted values in the positions
// it reads, and two doubles that compare equal are the same bits except +0 and -0 (and NaN compares unequal to
// everything, which makes the insertion sort's result depend on the order of the input). So a tile holding no NaN
// and no -0 gives bit for bit the scalar result; a tile holding either is left to the scalar path.

#include <cstdint>
#include <utility>
#include <vector>

namespace wavg::cpu {

constexpr std::uint32_t k_tile = 8;          // elements per tile: one AVX-512 vector of doubles
constexpr std::uint32_t k_network_max = 64;  // larger N keep the scalar sort

struct OrderNetwork {
  std::uint32_t n = 0;
  std::vector<std::pair<std::uint8_t, std::uint8_t>> comparators;  // (lower, upper) row, in order
};

// Returns Batcher's odd-even merge sort network for `n` values, pruned to what positions [lo, hi) depend on.
OrderNetwork make_order_network(std::uint32_t n, std::uint32_t lo, std::uint32_t hi);

// Applies `net` to a tile: row k holds value k of k_tile elements, at v[k * k_tile + lane].
void apply_order_network(const OrderNetwork& net, double* v);

// Tells whether a tile of `count` doubles can take the network (no NaN, no -0; see above).
bool network_exact(const double* v, std::uint32_t count);

}  // namespace wavg::cpu
