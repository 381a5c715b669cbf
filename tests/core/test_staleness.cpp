// Staleness weights of asynchronous aggregation: the functions at hand-computed points, the parser, and the rule
// through the federated method.
#include <doctest/doctest.h>

#include "support/memory_checkpoint.hpp"
#include "wavg/error.hpp"
#include "wavg/federated.hpp"

using namespace wavg;
using wavg::test::run_federated;
using wavg::test::Values;

TEST_CASE("staleness functions at hand-computed points") {
  const StalenessFn constant = parse_staleness_fn("constant");
  CHECK(staleness_weight(constant, 0) == 1);
  CHECK(staleness_weight(constant, 7) == 1);
  const StalenessFn poly = parse_staleness_fn("polynomial:a=0.5");
  CHECK(staleness_weight(poly, 0) == 1);
  CHECK(staleness_weight(poly, 3) == 0.5);  // 4^-0.5
  CHECK(staleness_weight(parse_staleness_fn("polynomial:a=2"), 1) == 0.25);
  const StalenessFn hinge = parse_staleness_fn("hinge:b=2,a=0.5");
  CHECK(staleness_weight(hinge, 2) == 1);    // up to b: 1
  CHECK(staleness_weight(hinge, 4) == 0.5);  // 1 / (0.5 * 2 + 1)
}

TEST_CASE("--staleness-fn refuses what it cannot read") {
  for (const char* bad : {"", "linear", "polynomial", "polynomial:", "polynomial:b=1", "polynomial:a=-1",
                          "polynomial:a=x", "polynomial:a=1,a=2", "hinge:a=1", "constant:a=1", "hinge:a=1,b=inf"})
    CHECK_THROWS_AS(parse_staleness_fn(bad), Error);
}

TEST_CASE("the FedAsync rule: base + (alpha/K) sum s_k u_k") {
  // Updates 4 and 8 from base 2, weights s = 1 and 0.25, alpha 0.5: 2 + 0.5 / 2 * (4 + 0.25 * 8) = 3.5.
  FederatedOptions o;
  o.staleness_fn = parse_staleness_fn("constant");  // as merge sets it; the weights are given directly below
  o.staleness = {1, 0.25};
  o.mix = 0.5;
  CHECK(run_federated({{{6}}, {{10}}}, {{2}}, o) == Values{{3.5}});
}
