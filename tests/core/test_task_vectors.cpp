// TIES's and breadcrumbs' trimming on tensors that span many engine blocks, with many equal magnitudes: the
// two-pass thresholds (histogram, then the one bucket's candidates) must keep exactly the k = floor(D * n) largest
// |tau| of each tensor (breadcrumbs: the band below the largest floor(gamma * n)), ties to the lower index, as a
// whole-tensor sort written here does; and the same bytes for 1 and 2 threads. Tensors that fit in one block skip the
// passes and take their threshold in combine(). DARE's L1 rescale, its mask kept from the norms to the combination
// for a tensor of one block and drawn twice for a larger one, against Philox written out here. Last, della's blocks
// of whole rows.

#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>

#include "support/memory_checkpoint.hpp"
#include "wavg/philox.hpp"
#include "wavg/task_methods.hpp"

using namespace wavg;
using namespace wavg::test;

namespace {

// Runs `o` through the engine with blocks of `block` elements per input, the tensors given `shapes` (none: 1-D).
Values run_task(const std::vector<Values>& tunes, const Values& base, const TaskOptions& o, int threads,
                std::uint64_t block = 1000, const std::vector<Shape>& shapes = {}) {
  std::vector<std::unique_ptr<MemoryReader>> readers;
  std::vector<Reader*> raw;
  for (std::size_t k = 0; k < tunes.size(); ++k) {
    readers.push_back(std::make_unique<MemoryReader>("in" + std::to_string(k), tunes[k]));
    raw.push_back(readers.back().get());
  }
  MemoryReader base_reader("base", base);
  for (std::size_t t = 0; t < shapes.size(); ++t) {
    for (auto& r : readers) r->reshape(t, shapes[t]);
    base_reader.reshape(t, shapes[t]);
  }
  const Plan plan = build_plan(raw, PlanOptions{});
  auto backend = make_cpu_backend();
  auto method = make_task_method(*backend, plan, o);
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  Engine engine(plan, raw, *method, *backend, tunes.size() * block * sizeof(double));
  engine.set_base(&base_reader, match_base(plan, base_reader));
  MemoryWriter writer(plan);
  engine.verify();
  engine.run(writer);
  omp_set_num_threads(before);
  return writer.values;
}

// Which ranks (|tau| in decreasing order, equal ones by increasing index) a method keeps: [first, last).
struct Band {
  std::size_t first, last;
};

// TIES: mergekit 0.1.5's k = max(1, floor(D * n)), so a tensor smaller than 1/D keeps its largest entry.
Band ties_band(std::size_t n, double density) {
  return {0, std::max<std::size_t>(1, static_cast<std::size_t>(density * static_cast<double>(n)))};
}

// Breadcrumbs (mergekit's magnitude_outliers): sorted ascending, the bottom max(0, n - target - top) go and the
// next target stay, so in decreasing order the band starts after the n - bottom - target largest.
Band crumbs_band(std::size_t n, double density, double gamma) {
  const auto target = static_cast<std::size_t>(density * static_cast<double>(n));
  const auto top = static_cast<std::size_t>(gamma * static_cast<double>(n));
  const std::size_t bottom = target + top >= n ? 0 : n - target - top;
  return {n - bottom - target, n - bottom};
}

// The combination of sparsified task vectors tv: elect a sign (or not), sum the agreeing entries (normalised by their
// weights, or not), scale by lambda, add the base.
std::vector<double> combine_reference(const std::vector<std::vector<double>>& tv, const std::vector<double>& b,
                                      const std::vector<double>& w, double lambda, bool elect, bool normalize) {
  const std::size_t n = b.size(), inputs = tv.size();
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0;
    for (std::size_t k = 0; k < inputs; ++k) sum += w[k] * tv[k][i];
    if (!elect) {
      out[i] = b[i] + lambda * sum;
      continue;
    }
    const double sign = sum >= 0 ? 1 : -1;
    double num = 0, den = 0;
    for (std::size_t k = 0; k < inputs; ++k) {
      const double v = w[k] * tv[k][i];
      if ((v > 0 && sign > 0) || (v < 0 && sign < 0)) {
        num += v;
        den += w[k];
      }
    }
    out[i] = b[i] + lambda * (normalize ? num / (den == 0 ? 1 : den) : num);
  }
  return out;
}

// TIES and breadcrumbs written out over whole tensors: sort, trim, then combine_reference.
std::vector<double> ties_reference(const std::vector<std::vector<double>>& x, const std::vector<double>& b,
                                   const std::vector<double>& w, Band band, double lambda, bool elect = true,
                                   bool normalize = true) {
  const std::size_t n = b.size(), inputs = x.size();
  std::vector<std::vector<double>> tv(inputs, std::vector<double>(n, 0.0));
  for (std::size_t k = 0; k < inputs; ++k) {
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) {
      return std::fabs(x[k][i] - b[i]) > std::fabs(x[k][j] - b[j]);
    });
    for (std::size_t r = band.first; r < band.last; ++r) tv[k][order[r]] = x[k][order[r]] - b[order[r]];
  }
  return combine_reference(tv, b, w, lambda, elect, normalize);
}

// Three fine-tunes of four tensors (10007, 3, 2500, 700 values; 700 is one block, settled in combine) in steps of
// 1/8, so many magnitudes are equal; the third tensor's first input equals the base (a zero task vector).
void make_tunes(Values& base, std::vector<Values>& tunes) {
  std::mt19937_64 rng(19);
  std::uniform_int_distribution<int> step(-12, 12);
  for (std::size_t size : {10'007, 3, 2'500, 700}) {
    base.emplace_back(size);
    for (double& v : base.back()) v = step(rng) / 4.0;
    for (auto& t : tunes) {
      t.emplace_back(base.back());
      for (double& v : t.back()) v += step(rng) / 8.0;
    }
  }
  tunes[0][2] = base[2];
}

// Runs `o` on make_tunes' models with 1 and 2 threads: the same bytes, and ties_reference's values with the band
// band_of(n) gives a tensor of n values.
void check_trim(const TaskOptions& o, const std::function<Band(std::size_t)>& band_of, bool elect, bool normalize) {
  Values base;
  std::vector<Values> tunes(3);
  make_tunes(base, tunes);
  const Values one = run_task(tunes, base, o, 1);
  const Values two = run_task(tunes, base, o, 2);
  for (std::size_t t = 0; t < base.size(); ++t) {
    CAPTURE(t);
    CHECK(std::memcmp(one[t].data(), two[t].data(), one[t].size() * sizeof(double)) == 0);
    const std::vector<double> want = ties_reference({tunes[0][t], tunes[1][t], tunes[2][t]}, base[t], o.weights,
                                                    band_of(base[t].size()), *o.param("lambda"), elect, normalize);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < want.size(); ++i) wrong += std::fabs(one[t][i] - want[i]) > 1e-12 * std::fabs(want[i]);
    CHECK(wrong == 0);
  }
}

}  // namespace

TEST_CASE(
    "breadcrumbs keeps exactly the band of ranks mergekit's magnitude_outliers keeps, across blocks, equal "
    "magnitudes by index") {
  // (density, gamma): the usual band, a band reaching the bottom (D + gamma > 1), no top dropped, density 1.
  for (const auto& [density, gamma] :
       std::vector<std::pair<double, double>>{{0.3, 0.1}, {0.8, 0.4}, {0.5, 0}, {1, 0.2}})
    for (const MethodSpec* method : {&method_row("breadcrumbs"), &method_row("breadcrumbs-ties")}) {
      CAPTURE(density);
      CAPTURE(gamma);
      TaskOptions o;
      o.method = method;
      o.weights = {1.0, -0.5, 2.0};
      o.params["density"] = density;
      o.params["gamma"] = gamma;
      o.params["lambda"] = 1.5;
      o.has_base = true;
      const auto band = [&](std::size_t n) { return density >= 1 ? Band{0, n} : crumbs_band(n, density, gamma); };
      check_trim(o, band, method == &method_row("breadcrumbs-ties"), false);
    }
}

TEST_CASE(
    "ties keeps exactly the top max(1, floor(D*n)) magnitudes of each tensor across blocks, ties to the lower "
    "index") {
  for (double density : {0.3, 0.5, 1.0}) {
    CAPTURE(density);
    TaskOptions o;
    o.method = &method_row("ties");
    o.weights = {1.0, 2.0, 0.5};
    o.params["density"] = density;
    o.params["lambda"] = 0.75;
    o.has_base = true;
    check_trim(
        o, [&](std::size_t n) { return ties_band(n, density); }, true, true);
  }
}

// DARE with the L1 rescale (mergekit >= 0.1): input k keeps element i when word k % 4 of philox_block(seed, tensor +
// (k / 4 << 32), i), over 2^32, is below the density, scaled by |tau_k|_1 / |kept tau_k|_1 (1 when either is below
// 1e-7). Six inputs, so two Philox streams; blocks of 1000 elements (norms in pass 0, the mask drawn again in
// combine) and of the whole tensor (the mask drawn once and kept) must give the same bytes at 1 and 2 threads, and
// this formula's values.
TEST_CASE("dare's l1 rescale keeps the mask it drew for the norms: the same bytes as drawing it twice") {
  Values base;
  std::vector<Values> tunes(6);
  make_tunes(base, tunes);
  for (const MethodSpec* method : {&method_row("dare-linear"), &method_row("dare-ties")}) {
    const std::string name(method->name);
    CAPTURE(name);
    TaskOptions o;
    o.method = method;
    o.weights = {1.0, 2.0, 0.5, -0.25, 1.5, 0.75};
    o.params["density"] = 0.4;
    o.params["lambda"] = 0.75;
    o.seed = 11;
    o.normalize = method == &method_row("dare-ties");
    o.has_base = true;
    const Values whole = run_task(tunes, base, o, 1, 1 << 20);
    for (int threads : {1, 2}) {
      const Values small = run_task(tunes, base, o, threads, 1000);
      for (std::size_t t = 0; t < base.size(); ++t) {
        CAPTURE(t);
        CAPTURE(threads);
        CHECK(std::memcmp(whole[t].data(), small[t].data(), whole[t].size() * sizeof(double)) == 0);
      }
    }
    for (std::size_t t = 0; t < base.size(); ++t) {
      const std::size_t n = base[t].size();
      std::vector<std::vector<double>> tv(tunes.size(), std::vector<double>(n, 0.0));
      for (std::size_t k = 0; k < tunes.size(); ++k) {
        double all = 0, kept = 0;
        for (std::size_t i = 0; i < n; ++i) {
          const Philox4x32 r = philox_block(11, t + (std::uint64_t{k / 4} << 32), i);
          const double tau = tunes[k][t][i] - base[t][i];
          all += std::fabs(tau);
          if (static_cast<double>(r.v[k % 4]) / 4294967296.0 < 0.4) {
            tv[k][i] = tau;
            kept += std::fabs(tau);
          }
        }
        const double scale = all < 1e-7 || kept < 1e-7 ? 1 : all / kept;
        for (double& v : tv[k]) v *= scale;
      }
      const std::vector<double> want =
          combine_reference(tv, base[t], o.weights, 0.75, method == &method_row("dare-ties"), *o.normalize);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i) wrong += std::fabs(whole[t][i] - want[i]) > 1e-12 * std::fabs(want[i]);
      CAPTURE(t);
      CHECK(wrong == 0);
    }
  }
}

// della ranks each task vector's magnitudes along dimension 1, so its engine blocks must hold whole rows
// (Method::block_unit): 2-D, 4-D, 1-D and n x 1 tensors in blocks of about 1000 elements (rows would be cut between
// them if the engine did not ask the method) must give the bytes of one block per tensor, at 1 and 2 threads; the
// values themselves are checked against numpy's reference in tests/cli/task_methods.py.
const std::vector<Shape> k_shapes{{97, 31}, {4, 50, 7}, {2500}, {40, 1}};

TEST_CASE("della gives the same bytes for any block size and thread count: its blocks hold whole rows") {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  Values base;
  std::vector<Values> tunes(2);
  for (const Shape& s : k_shapes) {
    std::uint64_t n = 1;
    for (std::uint64_t d : s) n *= d;
    base.emplace_back(n);
    for (double& v : base.back()) v = normal(rng);
    for (auto& t : tunes) {
      t.emplace_back(base.back());
      for (double& v : t.back()) v += 0.1 * normal(rng);
    }
  }
  for (const MethodSpec* method : {&method_row("della"), &method_row("della-linear")}) {
    TaskOptions o;
    o.method = method;
    o.weights = {1.0, 0.5};
    o.params["density"] = 0.4;
    o.params["epsilon"] = 0.3;
    o.seed = 5;
    o.has_base = true;
    const Values whole = run_task(tunes, base, o, 1, 1 << 20, k_shapes);
    for (int threads : {1, 2}) {
      const Values small = run_task(tunes, base, o, threads, 1000, k_shapes);
      for (std::size_t t = 0; t < k_shapes.size(); ++t) {
        CAPTURE(t);
        CAPTURE(threads);
        CHECK(std::memcmp(whole[t].data(), small[t].data(), whole[t].size() * sizeof(double)) == 0);
      }
    }
  }
}
