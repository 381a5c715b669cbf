// --include / --exclude: which tensor names the plan keeps, by hand.

#include <doctest/doctest.h>

#include "wavg/plan.hpp"

using namespace wavg;

TEST_CASE("filters keep what some include matches and no exclude does; * also matches /") {
  PlanOptions o;
  CHECK(passes_filters("model_weights/dense/kernel:0", o));  // no filters: everything
  o.exclude = {"*num_batches_tracked"};
  CHECK_FALSE(passes_filters("layer1.bn.num_batches_tracked", o));
  CHECK(passes_filters("layer1.bn.running_mean", o));
  o.include = {"model_weights/*", "*.bias"};
  CHECK(passes_filters("model_weights/dense/kernel:0", o));
  CHECK(passes_filters("fc.bias", o));
  CHECK_FALSE(passes_filters("optimizer_weights/Adam/iter:0", o));
  o.exclude.push_back("*dense_?/*");
  CHECK_FALSE(passes_filters("model_weights/dense_1/kernel:0", o));
  CHECK(passes_filters("model_weights/dense_12/kernel:0", o));
  o = {};
  o.include = {"[ab].w"};
  CHECK(passes_filters("a.w", o));
  CHECK_FALSE(passes_filters("c.w", o));
}
