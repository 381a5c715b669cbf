// Robust aggregation against values worked out by hand on tiny inputs.
#include <doctest/doctest.h>

#include <cmath>

#include "support/memory_checkpoint.hpp"
#include "wavg/error.hpp"

using namespace wavg;
using wavg::test::run_federated;
using wavg::test::Values;

namespace {
std::vector<Values> scalars(std::initializer_list<double> xs) {
  std::vector<Values> out;
  for (double x : xs) out.push_back({{x}});
  return out;
}
FederatedOptions with(std::string_view method) {
  FederatedOptions o;
  o.robust.method = &method_row(method);
  return o;
}
}  // namespace

TEST_CASE("median of an odd number of inputs is the middle value") {
  CHECK(run_federated(scalars({1, 5, 2}), {}, with("median"))[0][0] == 2);
  // Per element: each coordinate takes its own median.
  const std::vector<Values> in{{{1, 30}}, {{5, 10}}, {{2, 20}}};
  CHECK(run_federated(in, {}, with("median"))[0] == std::vector<double>{2, 20});
}

TEST_CASE("median of an even number of inputs is the mean of the two middle values") {
  CHECK(run_federated(scalars({1, 5, 2, 4}), {}, with("median"))[0][0] == 3);
  CHECK(run_federated(scalars({7, -1}), {}, with("median"))[0][0] == 3);
}

TEST_CASE("weighted median takes the value where the cumulative weight reaches half") {
  FederatedOptions o = with("median");
  o.weights = {1, 1, 3};  // sorted 1 (w1), 2 (w3), 5 (w1): cumulative 1, 4 >= 2.5 -> 2
  CHECK(run_federated(scalars({1, 5, 2}), {}, o)[0][0] == 2);
  o.weights = {1, 3, 1, 1};  // sorted 1, 2, 4, 5 with weights 1, 1, 1, 3: cumulative 1, 2, 3 = half -> (4+5)/2
  CHECK(run_federated(scalars({1, 5, 2, 4}), {}, o)[0][0] == 4.5);
}

TEST_CASE("median with a base aggregates the updates and adds them to the base") {
  // Updates 1, 5, 2 against base 10: median 2, result 12.
  CHECK(run_federated(scalars({11, 15, 12}), {{10}}, with("median"))[0][0] == 12);
}

TEST_CASE("trim_count rounds the fraction down, with 0.1 * 10 counting as 1") {
  CHECK(trim_count(0.1, 10) == 1);
  CHECK(trim_count(0.3, 10) == 3);
  CHECK(trim_count(0.0999, 10) == 0);
  CHECK(trim_count(0.2, 9) == 1);
  CHECK(trim_count(0.49, 2) == 0);
}

TEST_CASE("trimmed mean at the boundary of the cut") {
  // 0..8 and an outlier 1000. trim 0.1 of 10 cuts one value at each end: the mean of 1..8 is 4.5.
  const auto in = scalars({0, 1, 2, 3, 4, 5, 6, 7, 8, 1000});
  FederatedOptions o = with("trimmed-mean");
  o.robust.trim = 0.1;
  CHECK(run_federated(in, {}, o)[0][0] == 4.5);
  // Just below 0.1 cuts nothing: the plain mean, (36 + 1000) / 10.
  o.robust.trim = 0.0999;
  CHECK(run_federated(in, {}, o)[0][0] == doctest::Approx(103.6).epsilon(1e-15));
  // 0.2 cuts two at each end: the mean of 2..7 is 4.5.
  o.robust.trim = 0.2;
  CHECK(run_federated(in, {}, o)[0][0] == 4.5);
  // 0.45 of 10 cuts 4 at each end: (4 + 5) / 2.
  o.robust.trim = 0.45;
  CHECK(run_federated(in, {}, o)[0][0] == 4.5);
}

TEST_CASE("trimmed mean refuses weights, too few inputs, and a fraction of one half") {
  FederatedOptions o = with("trimmed-mean");
  o.robust.trim = 0.1;
  o.weights = {1, 1, 1};
  CHECK_THROWS_AS(validate_federated(o, 3), Error);
  o.weights.clear();
  o.robust.trim = 0.5;
  CHECK_THROWS_AS(validate_federated(o, 10), Error);
  o.robust.trim = 0.34;  // cuts 1 of 3 at each end: 1 left, allowed
  CHECK_NOTHROW(validate_federated(o, 3));
}

TEST_CASE("Krum scores and selection") {
  // Points 0, 1, 3, 6, 100 with F = 1: each score sums the n - F - 2 = 2 smallest squared distances.
  //   0: 1 + 9 = 10   1: 1 + 4 = 5   3: 4 + 9 = 13   6: 9 + 25 = 34   100: 94^2 + 97^2 = 18245
  const auto in = scalars({0, 1, 3, 6, 100});
  std::vector<double> dist(25);
  const double x[] = {0, 1, 3, 6, 100};
  for (int j = 0; j < 5; ++j)
    for (int l = 0; l < 5; ++l) dist[j * 5 + l] = (x[j] - x[l]) * (x[j] - x[l]);
  CHECK(krum_scores(dist, 5, 1) == std::vector<double>{10, 5, 13, 34, 18245});
  CHECK(lowest_scores({10, 5, 13, 34, 18245}, 3) == std::vector<std::size_t>{0, 1, 2});
  CHECK(lowest_scores({2, 1, 1}, 1) == std::vector<std::size_t>{1});  // a tie goes to the lower index

  FederatedOptions o = with("krum");
  o.robust.byzantine = 1;
  std::vector<std::string> report;
  CHECK(run_federated(in, {}, o, "", &report)[0][0] == 1);
  CHECK(report == std::vector<std::string>{"selected input(s) 2"});

  o = with("multi-krum");
  o.robust.byzantine = 1;
  o.robust.select = 3;  // 0, 1, 3
  CHECK(run_federated(in, {}, o)[0][0] == doctest::Approx(4.0 / 3).epsilon(1e-15));
  o.weights = {1, 1, 2, 1, 1};  // (0 + 1 + 2*3) / 4
  CHECK(run_federated(in, {}, o)[0][0] == 1.75);
}

TEST_CASE("Krum refuses weights and too few inputs") {
  FederatedOptions o = with("krum");
  o.robust.byzantine = 1;
  CHECK_THROWS_AS(validate_federated(o, 4), Error);  // needs n >= 2F + 3 = 5
  CHECK_NOTHROW(validate_federated(o, 5));
  o.weights = {1, 1, 1, 1, 1};
  CHECK_THROWS_AS(validate_federated(o, 5), Error);
  o = with("multi-krum");
  o.robust.byzantine = 1;
  o.robust.select = 5;  // more than n - F = 4
  CHECK_THROWS_AS(validate_federated(o, 5), Error);
}

TEST_CASE("geometric median of a triangle is its Fermat point") {
  // (-1, 0), (1, 0), (0, 3): all angles below 120 degrees, so the Fermat point (0, y) sees the base under 120
  // degrees: y = 1 / tan(60 degrees) = 1 / sqrt(3).
  const std::vector<Values> in{{{-1, 0}}, {{1, 0}}, {{0, 3}}};
  FederatedOptions o = with("geometric-median");
  o.robust.gm_tol = 1e-15;
  o.robust.gm_max_iter = 10000;
  std::vector<std::string> report;
  const auto out = run_federated(in, {}, o, "", &report)[0];
  CHECK(std::abs(out[0]) < 1e-9);
  CHECK(out[1] == doctest::Approx(1 / std::sqrt(3.0)).epsilon(1e-6));
  // The default tolerance (a relative decrease of the objective of 1e-6) stops within 1e-3 of it.
  const auto rough = run_federated(in, {}, with("geometric-median"))[0];
  CHECK(std::abs(rough[1] - 1 / std::sqrt(3.0)) < 1e-3);
  REQUIRE(report.size() == 1);
  CHECK(report[0].rfind("Weiszfeld converged", 0) == 0);
}

TEST_CASE("geometric median of collinear points is their median, and ignores an outlier") {
  FederatedOptions o = with("geometric-median");
  o.robust.gm_tol = 1e-12;
  o.robust.gm_max_iter = 1000;
  CHECK(run_federated(scalars({0, 0, 0, 10}), {}, o)[0][0] == doctest::Approx(0).epsilon(1e-6).scale(1));
  const double got = run_federated(scalars({0, 1, 3, 6, 100}), {}, o)[0][0];
  CHECK(std::abs(got - 3) < 1e-6);
}
