// The assignment solver against brute force: every permutation of small matrices is scored and the best total must
// equal the solver's. Ties (few distinct values) and negative scores are included, since weight matching's scores
// are inner products that repeat and change sign.

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

#include "align/lap.hpp"

using wavg::align::solve_lap_max;

namespace {

double total(const std::vector<double>& s, std::size_t n, const std::vector<std::uint32_t>& p) {
  double t = 0;
  for (std::size_t i = 0; i < n; ++i) t += s[i * n + p[i]];
  return t;
}

double brute_force_best(const std::vector<double>& s, std::size_t n) {
  std::vector<std::uint32_t> p(n);
  std::iota(p.begin(), p.end(), 0u);
  double best = -1e300;
  do best = std::max(best, total(s, n, p));
  while (std::next_permutation(p.begin(), p.end()));
  return best;
}

bool is_permutation(const std::vector<std::uint32_t>& p, std::size_t n) {
  std::set<std::uint32_t> seen(p.begin(), p.end());
  return p.size() == n && seen.size() == n && *seen.rbegin() < n;
}

}  // namespace

TEST_CASE("the assignment maximises the total score, as brute force finds it") {
  std::mt19937_64 rng(7);
  for (std::size_t n = 1; n <= 7; ++n)
    for (int trial = 0; trial < 40; ++trial) {
      std::vector<double> s(n * n);
      const int distinct = trial % 3 == 0 ? 3 : 1000;  // every third matrix is full of ties
      std::uniform_int_distribution<int> pick(-distinct, distinct);
      for (double& v : s) v = pick(rng) * 0.37;
      const auto p = solve_lap_max(s, n);
      REQUIRE(is_permutation(p, n));
      CHECK(total(s, n, p) == doctest::Approx(brute_force_best(s, n)));
    }
}

TEST_CASE("a permuted diagonal is recovered exactly") {
  const std::size_t n = 300;
  std::vector<std::uint32_t> hidden(n);
  std::iota(hidden.begin(), hidden.end(), 0u);
  std::shuffle(hidden.begin(), hidden.end(), std::mt19937_64(3));
  std::vector<double> s(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) s[i * n + hidden[i]] = 1.0 + 0.01 * static_cast<double>(i % 7);
  CHECK(solve_lap_max(s, n) == hidden);
}

// Its speed is shown by tests/bench/lap_bench.cpp, not timed here.
TEST_CASE("a 1024 x 1024 random assignment is solved") {
  const std::size_t n = 1024;
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  std::vector<double> s(n * n);
  for (double& v : s) v = normal(rng);
  const auto p = solve_lap_max(s, n);
  CHECK(is_permutation(p, n));
  // A random matrix's optimum is far above a random assignment's expected total (0), near n * sqrt(2 ln n).
  CHECK(total(s, n, p) > 2.5 * static_cast<double>(n));
}
