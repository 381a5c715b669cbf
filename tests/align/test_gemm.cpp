// The score products of weight matching (src/align/gemm.cpp) with every instruction set this CPU runs, against the
// sums written out in double: both shapes (post = 1, A^T B; post > 1, blocks A_k B_k^T), accumulated onto what s
// held, and sizes that are no multiple of any vector width.

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "align/gemm.hpp"

using wavg::align::add_score_product;

TEST_CASE("every instruction set's score product is the sum over blocks of A_k B_k^T") {
  std::mt19937_64 rng(3);
  std::normal_distribution<float> normal;
  struct Case {
    std::uint64_t pre, n, post;
  };
  for (const Case c : {Case{37, 19, 1}, Case{5, 23, 7}, Case{1, 40, 33}, Case{130, 64, 1}}) {
    std::vector<float> a(c.pre * c.n * c.post), b(a.size()), start(c.n * c.n);
    for (float& v : a) v = normal(rng);
    for (float& v : b) v = normal(rng);
    for (float& v : start) v = normal(rng);
    for (wavg::align::Isa isa : wavg::align::runnable_isas()) {
      CAPTURE(wavg::align::isa_name(isa));
      CAPTURE(c.pre);
      std::vector<float> s = start;
      add_score_product(a.data(), b.data(), c.pre, c.n, c.post, s.data(), 1, isa);
      for (std::uint64_t i = 0; i < c.n; ++i)
        for (std::uint64_t j = 0; j < c.n; ++j) {
          double want = start[i * c.n + j];
          for (std::uint64_t k = 0; k < c.pre; ++k)
            for (std::uint64_t p = 0; p < c.post; ++p)
              want += static_cast<double>(a[(k * c.n + i) * c.post + p]) * b[(k * c.n + j) * c.post + p];
          REQUIRE(std::abs(s[i * c.n + j] - want) <= 1e-4 * (1 + std::abs(want)));
        }
    }
  }
}
