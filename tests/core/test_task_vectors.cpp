// TIES's trimming on tensors that span many engine blocks, with many equal magnitudes: the two-pass threshold
// (histogram, then the one bucket's candidates) must keep exactly the k = floor(D * n) largest |tau| of each
// tensor, ties to the lower index, as a whole-tensor sort written here does; and the same bytes for 1 and 2
// threads. Tensors that fit in one block take their threshold in pass 0 and are not read by pass 1.

#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "support/memory_checkpoint.hpp"
#include "wavg/task_methods.hpp"

using namespace wavg;
using namespace wavg::test;

namespace {

Values run_task(const std::vector<Values>& tunes, const Values& base, const TaskOptions& o, int threads) {
  std::vector<std::unique_ptr<MemoryReader>> readers;
  std::vector<Reader*> raw;
  for (std::size_t k = 0; k < tunes.size(); ++k) {
    readers.push_back(std::make_unique<MemoryReader>("in" + std::to_string(k), tunes[k]));
    raw.push_back(readers.back().get());
  }
  MemoryReader base_reader("base", base);
  const Plan plan = build_plan(raw, PlanOptions{});
  auto backend = make_cpu_backend();
  auto method = make_task_method(*backend, plan, o);
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  Engine engine(plan, raw, *method, *backend, tunes.size() * 1000 * sizeof(double));  // 1000 elements a block
  engine.set_base(&base_reader, match_base(plan, base_reader));
  MemoryWriter writer(plan);
  engine.verify();
  engine.run(writer);
  omp_set_num_threads(before);
  return writer.values;
}

// TIES written out over whole tensors: sort, trim, elect, combine.
std::vector<double> ties_reference(const std::vector<std::vector<double>>& x, const std::vector<double>& b,
                                   const std::vector<double>& w, double density, double lambda) {
  const std::size_t n = b.size(), inputs = x.size();
  // mergekit 0.1.5: k = max(1, floor(D * n)), so a tensor smaller than 1/D keeps its largest entry.
  const auto keep = std::max<std::size_t>(1, static_cast<std::size_t>(density * static_cast<double>(n)));
  std::vector<std::vector<double>> tv(inputs, std::vector<double>(n, 0.0));
  for (std::size_t k = 0; k < inputs; ++k) {
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) {
      return std::fabs(x[k][i] - b[i]) > std::fabs(x[k][j] - b[j]);
    });
    for (std::size_t r = 0; r < keep; ++r) tv[k][order[r]] = x[k][order[r]] - b[order[r]];
  }
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0;
    for (std::size_t k = 0; k < inputs; ++k) sum += w[k] * tv[k][i];
    const double sign = sum >= 0 ? 1 : -1;
    double num = 0, den = 0;
    for (std::size_t k = 0; k < inputs; ++k) {
      const double v = w[k] * tv[k][i];
      if ((v > 0 && sign > 0) || (v < 0 && sign < 0)) {
        num += v;
        den += w[k];
      }
    }
    out[i] = b[i] + lambda * (num / (den == 0 ? 1 : den));
  }
  return out;
}

}  // namespace

TEST_CASE(
    "ties keeps exactly the top max(1, floor(D*n)) magnitudes of each tensor across blocks, ties to the lower "
    "index") {
  std::mt19937_64 rng(19);
  std::uniform_int_distribution<int> step(-12, 12);             // multiples of 1/8: many equal magnitudes
  const std::vector<std::size_t> sizes{10'007, 3, 2'500, 700};  // 700: one block, found in one pass
  Values base;
  std::vector<Values> tunes(3);
  for (std::size_t size : sizes) {
    base.emplace_back(size);
    for (double& v : base.back()) v = step(rng) / 4.0;
    for (auto& t : tunes) {
      t.emplace_back(base.back());
      for (double& v : t.back()) v += step(rng) / 8.0;
    }
  }
  // The third tensor's first input equals the base: a zero task vector, nothing to keep.
  tunes[0][2] = base[2];
  const std::vector<double> w{1.0, 2.0, 0.5};
  for (double density : {0.3, 0.5, 1.0}) {
    TaskOptions o;
    o.method = Aggregator::ties;
    o.weights = w;
    o.density = density;
    o.lambda = 0.75;
    o.has_base = true;
    const Values one = run_task(tunes, base, o, 1);
    const Values two = run_task(tunes, base, o, 2);
    for (std::size_t t = 0; t < sizes.size(); ++t) {
      CAPTURE(density);
      CAPTURE(t);
      CHECK(std::memcmp(one[t].data(), two[t].data(), one[t].size() * sizeof(double)) == 0);
      const std::vector<double> want =
          ties_reference({tunes[0][t], tunes[1][t], tunes[2][t]}, base[t], w, density, 0.75);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < want.size(); ++i)
        wrong += std::fabs(one[t][i] - want[i]) > 1e-12 * std::fabs(want[i]);
      CHECK(wrong == 0);
    }
  }
}
