// The method table (src/core/methods/registry.cpp): the one check of weights every front end uses, against
// hand-picked weights whose sums are known.

#include <doctest/doctest.h>

#include <limits>
#include <vector>

#include "wavg/method_spec.hpp"

using namespace wavg;

namespace {

std::string problem(Aggregator a, std::vector<double> w, bool normalize) {
  return weights_problem(method_spec(a), w, normalize);
}

}  // namespace

TEST_CASE("the mean's weights: finite, not negative, a positive finite sum") {
  CHECK(problem(Aggregator::mean, {1, 3}, true).empty());
  CHECK(problem(Aggregator::mean, {}, true).empty());
  CHECK(problem(Aggregator::mean, {0, 0}, true) == "the weights sum to zero");
  CHECK(problem(Aggregator::mean, {1, -1}, true) == "weight -1 is negative");
  CHECK(problem(Aggregator::mean, {1, std::numeric_limits<double>::infinity()}, true) == "weight inf is not finite");
  CHECK(problem(Aggregator::mean, {1e308, 1e308}, true) == "the sum of the weights overflows");
}

TEST_CASE("signed weights: negatives subtract, a zero sum only matters where the method divides by it") {
  CHECK(problem(Aggregator::task_arithmetic, {1, -1}, false).empty());
  CHECK(problem(Aggregator::task_arithmetic, {1, -1}, true) ==
        "the weights sum to zero (0), and normalizing divides by their sum");
  CHECK(problem(Aggregator::multislerp, {0, 0}, true) ==
        "the weights sum to zero (0), and normalizing divides by their sum");
  CHECK(problem(Aggregator::multislerp, {0, 0}, false).empty());
  // TIES divides each element by the weights that agree with its sign: they cannot cancel.
  CHECK(problem(Aggregator::ties, {1, -1}, true).empty());
  CHECK(problem(Aggregator::dare_linear, {1e308, 1e308}, false) == "the sum of the weights overflows");
  CHECK(problem(Aggregator::nuslerp, {-1e308, -1e308}, false) == "the sum of the weights overflows");
  CHECK(problem(Aggregator::nuslerp, {std::numeric_limits<double>::quiet_NaN(), 1}, false) ==
        "weight nan is not finite");
}
