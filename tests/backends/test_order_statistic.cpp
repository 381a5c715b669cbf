// The CPU backend's order statistics take a fast path (bare doubles, index rule) when weights cannot change the
// result: equal power-of-two weights for the median, any weights for the trimmed mean. It must return the same
// bits as the weighted path, which equal integer weights (3, exact sums, so the same index rule) still take: checked
// on values built to trip a sort (duplicates, -0 against +0, NaNs, infinities) for N = 1 to 7, and against
// hand-computed medians.

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "wavg/backend.hpp"

using namespace wavg;

namespace {

std::vector<double> run(Backend& b, const std::vector<std::vector<double>>& inputs, double weight, OrderStat stat,
                        std::uint32_t trim) {
  std::vector<const void*> ptrs;
  for (const auto& in : inputs) ptrs.push_back(in.data());
  const BlockInputs block{DType::f64, inputs[0].size(), ptrs, nullptr};
  const std::vector<double> scales(inputs.size(), 1.0), weights(inputs.size(), weight);
  std::vector<double> out(inputs[0].size());
  b.update_order_statistic(block, scales.data(), weights.data(), stat, trim, out.data());
  return out;
}

}  // namespace

TEST_CASE("order statistics: the fast path gives the weighted path's bits, NaN, -0 and ties included") {
  auto cpu = make_cpu_backend();
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<double> pool{0.0, -0.0, 1.0, 1.0, -2.5, nan, inf, -inf, 3.25, -0.0};
  std::mt19937 rng(5);
  for (std::size_t n = 1; n <= 7; ++n) {
    std::vector<std::vector<double>> inputs(n, std::vector<double>(20000));
    for (auto& in : inputs)
      for (double& v : in) v = pool[rng() % pool.size()];
    for (const auto& [stat, trim] : {std::pair{OrderStat::median, 0u}, std::pair{OrderStat::trimmed_mean, 0u},
                                     std::pair{OrderStat::trimmed_mean, static_cast<unsigned>((n - 1) / 2)}}) {
      const auto fast = run(*cpu, inputs, 1.0, stat, trim), weighted = run(*cpu, inputs, 3.0, stat, trim);
      CHECK_MESSAGE(std::memcmp(fast.data(), weighted.data(), fast.size() * sizeof(double)) == 0, "n = ", n);
    }
  }
}

TEST_CASE("order statistics: fast-path medians computed by hand") {
  auto cpu = make_cpu_backend();
  // Columns are elements: median of {3, 1, 2} = 2; of {-0, 0, 0} = the middle after a stable sort = input 2's +0.
  const auto odd = run(*cpu, {{3, -0.0}, {1, 0.0}, {2, 0.0}}, 1.0, OrderStat::median, 0);
  CHECK(odd[0] == 2.0);
  CHECK(!std::signbit(odd[1]));
  // Even N: the mean of the two middle values; weights 0.25 (a power of two) take the fast path too.
  CHECK(run(*cpu, {{4}, {1}, {3}, {10}}, 0.25, OrderStat::median, 0)[0] == 3.5);
  CHECK(run(*cpu, {{4}, {1}, {3}, {10}, {-7}}, 1.0, OrderStat::trimmed_mean, 1)[0] == (1.0 + 3.0 + 4.0) / 3);
}

TEST_CASE("order statistics: tiles through the selection network give the weighted path's bits") {
  // No NaN and no -0 (those tiles keep the scalar sort), but ties, +0 and infinities, so that the network sorts
  // them; N up to 20, and counts that leave a partial last tile.
  auto cpu = make_cpu_backend();
  const double inf = std::numeric_limits<double>::infinity();
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  for (std::size_t n = 1; n <= 20; ++n) {
    std::vector<std::vector<double>> inputs(n, std::vector<double>(4099));
    for (auto& in : inputs)
      for (double& v : in) {
        const unsigned r = rng() % 16;
        v = r == 0 ? 0.0 : r == 1 ? inf : r == 2 ? -inf : r < 6 ? 1.5 : normal(rng);
      }
    for (const auto& [stat, trim] : {std::pair{OrderStat::median, 0u}, std::pair{OrderStat::trimmed_mean, 0u},
                                     std::pair{OrderStat::trimmed_mean, static_cast<unsigned>((n - 1) / 2)},
                                     std::pair{OrderStat::trimmed_mean, static_cast<unsigned>(n / 4)}}) {
      const auto fast = run(*cpu, inputs, 1.0, stat, trim), weighted = run(*cpu, inputs, 3.0, stat, trim);
      CHECK_MESSAGE(std::memcmp(fast.data(), weighted.data(), fast.size() * sizeof(double)) == 0, "n = ", n);
    }
  }
}
