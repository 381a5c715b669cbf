// The selection networks of the order statistics (src/backends/cpu/order_network.hpp), by the 0-1 principle: a
// comparator network sorts every input if it sorts every input of zeros and ones, so each network is run on all
// 2^N such inputs (a tile of k_tile of them at a time) and the positions it promises compared with the count of
// zeros.

#include <doctest/doctest.h>

#include <vector>

#include "backends/cpu/order_network.hpp"

using namespace wavg::cpu;

TEST_CASE("order network: Batcher's network, pruned to the positions read, selects them for every 0-1 input") {
  for (std::uint32_t n = 2; n <= 14; ++n) {
    const std::uint32_t ranges[][2] = {{0, n}, {(n - 1) / 2, n / 2 + 1}, {n / 4, n - n / 4}};
    for (const auto& [lo, hi] : ranges) {
      const OrderNetwork net = make_order_network(n, lo, hi);
      bool ok = true;
      std::vector<double> v(n * k_tile);
      for (std::uint32_t first = 0; first < (1u << n); first += k_tile) {
        for (std::uint32_t l = 0; l < k_tile; ++l)
          for (std::uint32_t k = 0; k < n; ++k) v[k * k_tile + l] = ((first + l) >> k) & 1;
        apply_order_network(net, v.data());
        for (std::uint32_t l = 0; l < k_tile && first + l < (1u << n); ++l) {
          const auto zeros = n - static_cast<std::uint32_t>(__builtin_popcount(first + l));
          for (std::uint32_t k = lo; k < hi; ++k) ok = ok && v[k * k_tile + l] == (k < zeros ? 0.0 : 1.0);
        }
      }
      CHECK_MESSAGE(ok, "n = ", n, ", positions [", lo, ", ", hi, ")");
      if (lo == 0 && hi == n) CHECK(net.comparators.size() <= n * n);  // a whole sort keeps every comparator
    }
  }
  // Pruning: the minimum of 4 needs 3 of the 5 comparators of a sort of 4.
  CHECK(make_order_network(4, 0, 4).comparators.size() == 5);
  CHECK(make_order_network(4, 0, 1).comparators.size() == 3);
}
