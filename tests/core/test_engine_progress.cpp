// The engine reports its progress through on_progress listeners (the provenance's hash threads, the terminal's
// progress line): after every block, how far the pass is through the plan's bytes of one input.

#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "support/memory_checkpoint.hpp"
#include "wavg/engine.hpp"

using namespace wavg;

TEST_CASE("the engine reports each block's end, in bytes of one input, to every listener") {
  // Two float64 tensors of 1000 and 3000 values; a budget of 800 bytes per input makes blocks of 100 values, so
  // tensor 0 ends 10 blocks at 800, 1600, ..., 8000 bytes and tensor 1 30 more, up to 32000.
  const test::Values a{std::vector<double>(1000, 1.0), std::vector<double>(3000, 2.0)};
  test::MemoryReader r1("a", a), r2("b", a);
  const std::vector<Reader*> inputs{&r1, &r2};
  const Plan plan = build_plan(inputs, PlanOptions{});
  auto backend = make_cpu_backend();
  auto method = make_weighted_mean(*backend, {});
  Engine engine(plan, inputs, *method, *backend, 2 * 800);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;
  int second = 0;
  engine.on_progress([&](std::uint64_t done, std::uint64_t total) { seen.emplace_back(done, total); });
  engine.on_progress([&](std::uint64_t, std::uint64_t) { ++second; });
  engine.verify();  // a plain mean reads nothing before run()
  CHECK(seen.empty());
  test::MemoryWriter writer(plan);
  engine.run(writer);
  REQUIRE(seen.size() == 40);
  CHECK(second == 40);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    CHECK(seen[i].first == 800 * (i + 1));
    CHECK(seen[i].second == 32000);
  }
}
