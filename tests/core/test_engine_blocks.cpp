// The engine's blocks end where an input's stored pieces meet (Reader::boundaries), so each block is lent whole,
// and the reductions (norms, distances, Gram matrices, L1 norms) still see the chunks of the plain layout: the same
// bits with and without pieces, for any thread count.

#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "wavg/element_math.hpp"
#include "wavg/engine.hpp"
#include "wavg/federated.hpp"
#include "wavg/task_methods.hpp"
#include "wavg/tensor_values.hpp"

using namespace wavg;

namespace {

constexpr std::uint64_t R = k_reduce_chunk;

// One float64 tensor stored in pieces: view() lends a range inside one piece, read() copies any other (and counts
// the elements it copied).
class PieceReader final : public Reader {
 public:
  PieceReader(std::string path, std::vector<double> values, std::vector<std::uint64_t> cuts, Shape shape = {})
      : m_path(std::move(path)), m_values(std::move(values)), m_cuts(std::move(cuts)) {
    m_tensors.push_back({"w", DType::f64, shape.empty() ? Shape{m_values.size()} : shape});
  }
  const std::string& path() const override { return m_path; }
  std::string format_name() const override { return "memory"; }
  std::string layout() const override { return "pieces"; }
  const std::vector<TensorInfo>& tensors() const override { return m_tensors; }
  std::map<std::string, std::string> metadata() const override { return {}; }
  void read(std::size_t, std::uint64_t offset, std::uint64_t count, void* dst) override {
    std::memcpy(dst, m_values.data() + offset, count * sizeof(double));
    copied += count;
  }
  const void* view(std::size_t, std::uint64_t offset, std::uint64_t count) override {
    for (const std::uint64_t c : m_cuts)
      if (offset < c && c < offset + count) return nullptr;
    return m_values.data() + offset;
  }
  std::vector<std::uint64_t> boundaries(std::size_t) const override { return m_cuts; }
  std::uint64_t copied = 0;

 private:
  std::string m_path;
  std::vector<double> m_values;
  std::vector<std::uint64_t> m_cuts;
  std::vector<TensorInfo> m_tensors;
};

class OneWriter final : public Writer {
 public:
  explicit OneWriter(std::uint64_t n) : out(n) {}
  bool holds_template_values(std::size_t) const override { return false; }
  void write(std::size_t, std::uint64_t offset, std::uint64_t count, const void* src) override {
    std::memcpy(out.data() + offset, src, count * sizeof(double));
  }
  void finish() override {}
  std::vector<double> out;
};

using MakeMethod = std::function<std::unique_ptr<Method>(Backend&, const Plan&)>;

// Merges `inputs` (against `base`) stored in pieces cut at `cuts`, with a block budget of `block` elements per
// input; returns the output and the elements read() copied from all inputs.
std::pair<std::vector<double>, std::uint64_t> merge(const std::vector<std::vector<double>>& inputs,
                                                    const std::vector<double>& base,
                                                    const std::vector<std::uint64_t>& cuts, std::uint64_t block,
                                                    const MakeMethod& make, int threads, Shape shape = {}) {
  std::vector<std::unique_ptr<PieceReader>> readers;
  std::vector<Reader*> raw;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    readers.push_back(std::make_unique<PieceReader>("in" + std::to_string(k), inputs[k], cuts, shape));
    raw.push_back(readers.back().get());
  }
  PieceReader base_reader("base", base, {}, shape);
  const Plan plan = build_plan(raw, PlanOptions{});
  auto backend = make_cpu_backend();
  auto method = make(*backend, plan);
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  Engine engine(plan, raw, *method, *backend, inputs.size() * block * sizeof(double));
  engine.set_base(&base_reader, match_base(plan, base_reader));
  OneWriter writer(base.size());
  engine.verify();
  engine.run(writer);
  omp_set_num_threads(before);
  std::uint64_t copied = 0;
  for (const auto& r : readers) copied += r->copied;
  return {writer.out, copied};
}

}  // namespace

TEST_CASE("block_ends cuts the plain blocks only where a reduction chunk begins") {
  // Plain blocks of 40000: [0, 40000) [40000, 80000) [80000, 100000).
  CHECK(block_ends(100000, 40000, {}) == std::vector<std::uint64_t>{40000, 80000, 100000});
  // 50000 lies in the chunk [40000, 40000 + R) of the second block: that chunk becomes a block of its own.
  CHECK(block_ends(100000, 40000, {50000}) == std::vector<std::uint64_t>{40000, 40000 + R, 80000, 100000});
  // A boundary where a chunk begins is a block end as it is; one in the last chunk of a block ends the block early.
  CHECK(block_ends(100000, 40000, {40000 + R, 2 * R + 1}) ==
        std::vector<std::uint64_t>{2 * R, 40000, 40000 + R, 80000, 100000});
  // Boundaries repeated, out of order, at 0 or past the end change nothing more.
  CHECK(block_ends(100000, 40000, {0, 50000, 100000, 50000, 7 * R}) == block_ends(100000, 40000, {50000}));
  CHECK(block_ends(0, 40000, {}).empty());
}

TEST_CASE("blocks end where the pieces meet: only the chunks that straddle two pieces are copied") {
  const std::uint64_t n = 1'000'003;
  const std::vector<std::uint64_t> cuts{250'001, 500'000, 750'123};
  std::mt19937_64 rng(7);
  std::normal_distribution<double> g(0, 1);
  std::vector<std::vector<double>> in(3, std::vector<double>(n));
  for (auto& x : in)
    for (double& v : x) v = g(rng);
  const std::vector<double> base(n, 0.25);
  const MakeMethod mean = [](Backend& b, const Plan&) { return make_weighted_mean(b, {}); };
  const auto [pieces, copied] = merge(in, base, cuts, 300'007, mean, 2);
  // At most one chunk per boundary and input is copied (without the boundaries, most of every block spanning one).
  CHECK(copied <= cuts.size() * in.size() * R);
  CHECK(merge(in, base, {}, 300'007, mean, 2).first == pieces);
  std::size_t wrong = 0;
  for (std::uint64_t i = 0; i < n; ++i) wrong += pieces[i] != (in[0][i] + in[1][i] + in[2][i]) / 3;
  CHECK(wrong == 0);
}

TEST_CASE("the reductions give the same bits with the inputs in pieces, for any thread count") {
  const std::uint64_t n = 700'001;
  std::mt19937_64 rng(11);
  std::normal_distribution<double> g(0, 1);
  std::vector<std::vector<double>> in(5, std::vector<double>(n));
  for (auto& x : in)
    for (double& v : x) v = 0.5 + g(rng);
  const std::vector<double> base(n, 0.5);
  std::vector<std::pair<const char*, MakeMethod>> methods;
  for (const auto& [name, a] : {std::pair{"geometric median", &method_row("geometric-median")},
                                std::pair{"multi-krum", &method_row("multi-krum")}})
    methods.emplace_back(name, [a](Backend& b, const Plan& plan) -> std::unique_ptr<Method> {
      FederatedOptions o;
      o.robust.method = a;
      if (a == &method_row("multi-krum")) o.robust.byzantine = 1, o.robust.select = 2;
      o.privacy.clip = 300;  // below the updates' norms (about 840): the norms pass decides every scale
      o.has_base = true;
      validate_federated(o, 5);
      return make_federated(b, plan, o, nullptr);
    });
  for (const auto& [name, a] :
       {std::pair{"model stock", &method_row("model-stock")}, std::pair{"dare-linear", &method_row("dare-linear")},
        std::pair{"ties", &method_row("ties")}})
    methods.emplace_back(name, [a](Backend& b, const Plan& plan) {
      TaskOptions o;
      o.method = a;
      o.has_base = true;
      if (a != &method_row("model-stock")) o.params["density"] = 0.3;
      if (a == &method_row("dare-linear")) o.seed = 5;
      validate_task(o, FederatedOptions{}, 5);
      return make_task_method(b, plan, o);
    });
  for (const auto& [label, make] : methods) {
    const std::string name = label;
    CAPTURE(name);
    const auto plain = merge(in, base, {}, 150'001, make, 1).first;
    for (int threads : {1, 3}) {
      const auto [pieces, copied] = merge(in, base, {200'000, 333'333, 500'017}, 150'001, make, threads);
      CHECK(copied <= 3 * in.size() * R * 3);  // three passes at most, each copying a chunk per boundary and input
      CHECK(pieces == plain);
    }
  }
}

TEST_CASE("filter-wise model stock gives each row its own t, rows cut by the pieces included") {
  // 3000 rows of 250 (a row far below a block, so blocks hold many rows), pieces cut inside rows 800 and 1333.
  const std::uint64_t rows = 3000, len = 250, n = rows * len;
  std::mt19937_64 rng(13);
  std::normal_distribution<double> g(0, 1);
  std::vector<std::vector<double>> in(3, std::vector<double>(n));
  std::vector<double> base(n);
  for (double& v : base) v = g(rng);
  for (auto& x : in)
    for (std::uint64_t i = 0; i < n; ++i) x[i] = base[i] + 0.3 * g(rng) + 0.1 * static_cast<double>(i / len % 7);
  const MakeMethod stock = [](Backend& b, const Plan& plan) {
    TaskOptions o;
    o.method = &method_row("model-stock");
    o.has_base = true;
    auto values = std::make_shared<TensorValues>();
    values->global["filter_wise"] = {ParamCondition{"", {1}}};
    values->per_input.resize(3);
    o.values = values;
    validate_task(o, FederatedOptions{}, 3);
    return make_task_method(b, plan, o);
  };
  const std::vector<std::uint64_t> cuts{800 * len + 17, 1333 * len + 200};
  const auto plain = merge(in, base, {}, 60'000, stock, 1, {rows, len}).first;
  for (int threads : {1, 3}) CHECK(merge(in, base, {}, 60'000, stock, threads, {rows, len}).first == plain);
  const auto pieces = merge(in, base, cuts, 60'000, stock, 2, {rows, len}).first;
  // mergekit's rule per row, written out: t = N c / (1 + (N - 1) c) from the mean pairwise cosine c of the task
  // vectors; out = t mean(x) + (1 - t) base.
  double worst = 0;
  for (std::uint64_t r = 0; r < rows; ++r) {
    double dot[3][3] = {};
    for (std::uint64_t i = r * len; i < (r + 1) * len; ++i)
      for (int j = 0; j < 3; ++j)
        for (int l = 0; l < 3; ++l) dot[j][l] += (in[j][i] - base[i]) * (in[l][i] - base[i]);
    double c = 0;
    for (int j = 0; j < 3; ++j)
      for (int l = j + 1; l < 3; ++l) c += dot[j][l] / std::sqrt(dot[j][j] * dot[l][l]) / 3;
    const double t = 3 * c / (1 + 2 * c);
    for (std::uint64_t i = r * len; i < (r + 1) * len; ++i) {
      const double want = t * (in[0][i] + in[1][i] + in[2][i]) / 3 + (1 - t) * base[i];
      worst = std::max({worst, std::fabs(plain[i] - want), std::fabs(pieces[i] - want)});
    }
  }
  CHECK(worst < 1e-12);
}
