#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstring>

#include "support/memory_checkpoint.hpp"
#include "wavg/diff.hpp"

using wavg::test::MemoryReader;

namespace {

wavg::ModelDiff diff_of(const wavg::test::Values& a, const wavg::test::Values& b, std::uint64_t block_bytes) {
  MemoryReader ra("a", a), rb("b", b);
  const wavg::Plan plan = wavg::build_plan({&ra, &rb}, {});
  return wavg::diff_models(plan, ra, rb, block_bytes);
}

}  // namespace

TEST_CASE("diff: distances of hand-computed vectors") {
  // A = (3, 4), B = (0, 4): A - B = (3, 0), |A - B| = 3, |A| = 5, |B| = 4, A.B = 16, cosine = 16 / 20.
  const auto d = diff_of({{3, 4}, {1, 0}}, {{0, 4}, {0, 1}}, 1 << 20);
  REQUIRE(d.tensors.size() == 2);
  const auto& t = d.tensors[0].sums;
  CHECK(t.l2() == 3.0);
  CHECK(t.relative() == 3.0 / 5.0);
  CHECK(t.cosine() == 0.8);
  CHECK(t.max_abs == 3.0);
  // Orthogonal unit vectors: distance sqrt(2), cosine 0.
  CHECK(d.tensors[1].sums.cosine() == 0.0);
  CHECK(d.tensors[1].sums.l2() == std::sqrt(2.0));
  // Totals over (3, 4, 1, 0) and (0, 4, 0, 1): |A - B|^2 = 9 + 1 + 1 = 11, |A|^2 = 26, |B|^2 = 17, A.B = 16.
  CHECK(d.total.l2() == std::sqrt(11.0));
  CHECK(d.total.relative() == std::sqrt(11.0) / std::sqrt(26.0));
  CHECK(d.total.cosine() == 16.0 / (std::sqrt(26.0) * std::sqrt(17.0)));
  CHECK(d.total.values == 4);
}

TEST_CASE("diff: zero vectors and NaN have defined results") {
  const auto d = diff_of({{0, 0}, {0}, {1, NAN}}, {{0, 0}, {2}, {1, 1}}, 1 << 20);
  CHECK(d.tensors[0].sums.relative() == 0.0);       // both zero
  CHECK(std::isnan(d.tensors[0].sums.cosine()));    // undefined
  CHECK(std::isinf(d.tensors[1].sums.relative()));  // A zero, B not
  CHECK(std::isnan(d.tensors[2].sums.max_abs));     // a NaN difference is not hidden by max
  CHECK(std::isnan(d.total.max_abs));
}

TEST_CASE("diff: the same bits for any block size and thread count") {
  wavg::test::Values a(1), b(1);
  for (int i = 0; i < 100'000; ++i) {
    a[0].push_back(std::sin(i * 0.37) * 1e3);
    b[0].push_back(std::cos(i * 0.11) * 1e-3);
  }
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = diff_of(a, b, 8 << 10);
  omp_set_num_threads(2);
  const auto two = diff_of(a, b, 8 << 10);
  const auto big = diff_of(a, b, 64 << 20);
  omp_set_num_threads(threads);
  for (const auto* d : {&two, &big}) {
    CHECK(std::memcmp(&d->total.diff_sq, &one.total.diff_sq, sizeof(double)) == 0);
    CHECK(std::memcmp(&d->total.dot, &one.total.dot, sizeof(double)) == 0);
    CHECK(std::memcmp(&d->total.a_sq, &one.total.a_sq, sizeof(double)) == 0);
  }
}
