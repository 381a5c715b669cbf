// Selection networks over tiles (order_network.hpp).

#include "backends/cpu/order_network.hpp"

#include <algorithm>
#include <cstring>

namespace wavg::cpu {

OrderNetwork make_order_network(std::uint32_t n, std::uint32_t lo, std::uint32_t hi) {
  OrderNetwork net;
  net.n = n;
  // Batcher's odd-even merge sort for any n (Knuth, TAOCP 5.3.4, Algorithm M): merges of runs of p, each as
  // comparisons at distance k, skipping those that would cross into the next pair of runs.
  std::vector<std::pair<std::uint8_t, std::uint8_t>> all;
  for (std::uint32_t p = 1; p < n; p <<= 1)
    for (std::uint32_t k = p; k >= 1; k >>= 1)
      for (std::uint32_t j = k % p; j + k < n; j += 2 * k)
        for (std::uint32_t i = 0; i < std::min(k, n - j - k); ++i)
          if ((i + j) / (2 * p) == (i + j + k) / (2 * p))
            all.emplace_back(static_cast<std::uint8_t>(i + j), static_cast<std::uint8_t>(i + j + k));
  // Backwards from the outputs read: a comparator matters when it writes a row some later step (or the result)
  // reads, and then both its rows are read.
  std::vector<bool> needed(n, false);
  for (std::uint32_t k = lo; k < hi; ++k) needed[k] = true;
  for (auto c = all.rbegin(); c != all.rend(); ++c) {
    if (!needed[c->first] && !needed[c->second]) continue;
    needed[c->first] = needed[c->second] = true;
    net.comparators.push_back(*c);
  }
  std::reverse(net.comparators.begin(), net.comparators.end());
  return net;
}

// Compiled for AVX-512, AVX2 and the baseline, picked at load time: the loop over the tile's lanes is one vector
// min and max (no NaN or -0 reach here, where the instructions' operand order would matter).
__attribute__((target_clones("avx512f", "avx2", "default"))) void apply_order_network(const OrderNetwork& net,
                                                                                      double* v) {
  // GCC's vector type: one AVX-512 register, two AVX2 or four SSE2 ones in the other clones; each lane does what
  // the scalar select did (the compiler kept that scalar, unsure the two rows do not overlap).
  using Lanes = double __attribute__((vector_size(k_tile * sizeof(double))));
  for (const auto& [a, b] : net.comparators) {
    double* x = v + std::size_t{a} * k_tile;
    double* y = v + std::size_t{b} * k_tile;
    Lanes xv, yv;
    std::memcpy(&xv, x, sizeof xv);
    std::memcpy(&yv, y, sizeof yv);
    const auto less = yv < xv;
    const Lanes lo = less ? yv : xv;
    const Lanes hi = less ? xv : yv;
    std::memcpy(x, &lo, sizeof lo);
    std::memcpy(y, &hi, sizeof hi);
  }
}

// On the bits, so that the loop vectorises: a NaN's magnitude is above infinity's, -0 is the sign bit alone.
__attribute__((target_clones("avx512f", "avx2", "default"))) bool network_exact(const double* v,
                                                                                std::uint32_t count) {
  std::uint64_t bad = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint64_t bits;
    std::memcpy(&bits, &v[i], sizeof bits);
    bad |= static_cast<std::uint64_t>((bits & 0x7fffffffffffffffu) > 0x7ff0000000000000u) |
           static_cast<std::uint64_t>(bits == 0x8000000000000000u);
  }
  return bad == 0;
}

}  // namespace wavg::cpu
