// The built-in trainer and the local-SGD driver: backpropagation against finite differences, CSV parsing against
// hand-written rows, and the seed question: with plain SGD and H = 1, averaging the workers' updated weights equals
// synchronous SGD on the averaged gradient.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "support/temp_dir.hpp"
#include "train/dataset.hpp"
#include "train/driver.hpp"
#include "train/mlp.hpp"
#include "train/model_io.hpp"

using namespace wavg::train;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) {
  static const wavg::test::TempDir root;  // removed, with every run's directory, when the tests end
  const fs::path p = fs::path(root.path()) / name;
  fs::create_directories(p);
  return p;
}

LocalSgdOptions small_run(const fs::path& out) {
  LocalSgdOptions o;
  o.data = std::string(WAVG_SAMPLES_DIR) + "/digits/digits.csv.gz";
  o.hidden = {16};
  o.workers = 4;
  o.batch = 8;
  o.lr = 0.1;
  o.out_dir = out.string();
  o.quiet = true;
  return o;
}

Mlp final_model(const LocalSgdOptions& o) {
  Mlp m(64, o.hidden, 10);
  load_model(m, o.out_dir + "/final.h5");
  return m;
}

double max_relative_difference(Mlp& a, Mlp& b) {
  double diff = 0, scale = 0;
  const auto pa = a.params(), pb = b.params();
  for (std::size_t i = 0; i < pa.size(); ++i)
    for (std::uint64_t j = 0; j < pa[i].info.count(); ++j) {
      diff = std::max(diff, std::abs(pa[i].data[j] - pb[i].data[j]));
      scale = std::max(scale, std::abs(pb[i].data[j]));
    }
  return diff / scale;
}

// Trains small_run's workers with local SGD (H = `period`) and with synchronous SGD for the same `rounds`, in
// directories named after `tag`; returns the two final models.
std::pair<Mlp, Mlp> local_and_sync(const std::string& tag, std::uint64_t period, std::uint64_t rounds) {
  LocalSgdOptions local = small_run(temp_dir("local" + tag)), sync = small_run(temp_dir("sync" + tag));
  local.period = sync.period = period;
  local.rounds = sync.rounds = rounds;
  sync.mode = Mode::sync;
  auto a = make_local_averager();
  run_builtin(local, *a);
  run_builtin(sync, *a);
  return {final_model(local), final_model(sync)};
}

// A hierarchical run of small_run's 4 workers: groups of 2, H = 2, global averages every `group_period` steps.
LocalSgdOptions groups_of_two(const std::string& name, std::uint64_t group_period) {
  LocalSgdOptions o = small_run(temp_dir(name));
  o.period = 2;
  o.group_size = 2;
  o.group_period = group_period;
  return o;
}

// Runs `o` for its rounds straight through in NAME_straight and, in NAME_split, for half of them and then on with
// --resume to the end.
struct Resumed {
  LocalSgdOptions split;  // the resumed run's options (--resume set)
  RunSummary summary;     // what the resumed part reported
  double difference = 0;  // between the two final models (max_relative_difference)
};
Resumed straight_and_resumed(const LocalSgdOptions& o, const std::string& name) {
  LocalSgdOptions straight = o, split = o;
  straight.out_dir = temp_dir(name + "_straight").string();
  split.out_dir = temp_dir(name + "_split").string();
  split.rounds = o.rounds / 2;
  auto a = make_local_averager();
  run_builtin(straight, *a);
  run_builtin(split, *a);
  split.rounds = o.rounds;
  split.resume = true;
  const RunSummary s = run_builtin(split, *a);
  Mlp x = final_model(straight), y = final_model(split);
  return {split, s, max_relative_difference(x, y)};
}

}  // namespace

TEST_CASE("load_csv reads features and labels from hand-written rows") {
  const fs::path dir = temp_dir("csv");
  std::ofstream(dir / "d.csv") << "1,2.5,0\n-3,4,1\n\n0.5,0,2\r\n";
  const Dataset d = load_csv((dir / "d.csv").string(), -1);
  CHECK(d.rows() == 3);
  CHECK(d.features == 2);
  CHECK(d.classes == 3);
  CHECK(d.x == std::vector<double>{1, 2.5, -3, 4, 0.5, 0});
  CHECK(d.y == std::vector<std::int32_t>{0, 1, 2});
  // With the label in column 0, row 2's label would be -3: refused.
  CHECK_THROWS_WITH(load_csv((dir / "d.csv").string(), 0), doctest::Contains("line 2: label"));
}

TEST_CASE("load_csv refuses a bad label and a short row, naming the line") {
  const fs::path dir = temp_dir("csvbad");
  std::ofstream(dir / "a.csv") << "1,2,0\n1,2,0.5\n";
  CHECK_THROWS_WITH(load_csv((dir / "a.csv").string(), -1), doctest::Contains("line 2: label"));
  std::ofstream(dir / "b.csv") << "1,2,0\n1,0\n";
  CHECK_THROWS_WITH(load_csv((dir / "b.csv").string(), -1), doctest::Contains("line 2: 2 columns, expected 3"));
  std::ofstream(dir / "c.csv") << "1,x,0\n";
  CHECK_THROWS_WITH(load_csv((dir / "c.csv").string(), -1), doctest::Contains("line 1: not a comma-separated"));
}

TEST_CASE("label-sorted shards give each worker few classes, iid shards all of them") {
  Dataset all = load_csv(std::string(WAVG_SAMPLES_DIR) + "/digits/digits.csv.gz", -1), train, test;
  split_train_test(all, 0.2, train, test);
  CHECK(test.rows() == 359);  // floor(0.2 * 1797)
  auto classes = [](const Dataset& d) {
    std::vector<bool> seen(d.classes);
    for (auto y : d.y) seen[static_cast<std::size_t>(y)] = true;
    return std::count(seen.begin(), seen.end(), true);
  };
  for (const Dataset& s : make_shards(train, 5, Shard::label_sorted, 1)) CHECK(classes(s) <= 4);
  for (const Dataset& s : make_shards(train, 5, Shard::iid, 1)) CHECK(classes(s) == 10);
}

TEST_CASE("the MLP gradient matches central finite differences") {
  Dataset d;
  d.features = 3;
  d.classes = 3;
  d.x = {0.1, 0.7, -0.3, 0.9, -0.2, 0.4, -0.5, 0.3, 0.8, 0.2, 0.2, -0.9};
  d.y = {0, 2, 1, 2};
  Mlp m(3, {5, 4}, 3), g(3, {5, 4}, 3);
  m.init_glorot(42);
  for (auto& l : m.layers) l.bias.setConstant(0.05);  // keep ReLUs away from their kink
  Workspace ws;
  const std::vector<std::size_t> rows{0, 1, 2, 3};
  gradient(m, d, rows, g, ws);
  auto params = m.params();
  const auto grads = g.params();
  const double h = 1e-6;
  for (std::size_t i = 0; i < params.size(); ++i)
    for (std::uint64_t j = 0; j < params[i].info.count(); ++j) {
      const double keep = params[i].data[j];
      params[i].data[j] = keep + h;
      const double up = evaluate(m, d, ws).loss;
      params[i].data[j] = keep - h;
      const double down = evaluate(m, d, ws).loss;
      params[i].data[j] = keep;
      CHECK(grads[i].data[j] == doctest::Approx((up - down) / (2 * h)).epsilon(1e-6));
    }
}

TEST_CASE("local SGD with H = 1 equals synchronous SGD on averaged gradients after 100 steps") {
  auto [l, s] = local_and_sync("1", 1, 100);
  const LocalSgdOptions o = small_run(temp_dir("local1"));
  Mlp init(64, o.hidden, 10);
  init.init_glorot(hash_key(o.seed, 0x1417));
  CHECK(max_relative_difference(l, s) < 1e-6);
  CHECK(max_relative_difference(l, init) > 0.1);  // it did train
}

TEST_CASE("local SGD with H = 4 differs from synchronous SGD") {
  auto [l, s] = local_and_sync("4", 4, 25);
  CHECK(max_relative_difference(l, s) > 1e-4);
}

TEST_CASE("the driver's result does not depend on the thread count") {
  LocalSgdOptions one = small_run(temp_dir("t1")), two = small_run(temp_dir("t2"));
  one.period = two.period = 4;
  one.rounds = two.rounds = 10;
  one.momentum = two.momentum = 0.9;
  auto a = make_local_averager();
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  run_builtin(one, *a);
  omp_set_num_threads(3);
  run_builtin(two, *a);
  omp_set_num_threads(saved);
  Mlp x = final_model(one), y = final_model(two);
  CHECK(max_relative_difference(x, y) == 0.0);
}

TEST_CASE("a resumed run ends where an uninterrupted one does, counters included") {
  LocalSgdOptions o = small_run(temp_dir("plain"));
  o.rounds = 6;
  const Resumed r = straight_and_resumed(o, "plain");
  CHECK(r.summary.rounds == 6);
  CHECK(r.summary.steps == 48);
  CHECK(r.difference == 0.0);
  std::ifstream log(r.split.out_dir + "/log.csv");
  std::string line, last;
  int lines = 0;
  while (std::getline(log, line)) ++lines, last = line;
  CHECK(lines == 7);
  CHECK(last.rfind("6,48,", 0) == 0);
}

TEST_CASE("average_groups gives each worker its group's mean (hand-computed)") {
  // Four one-weight models (kernel 1x1 and bias): groups {0, 1} and {2, 3} of size 2.
  std::vector<Mlp> models(4, Mlp(1, {}, 1));
  const double kernels[4] = {1, 2, 3, 6}, biases[4] = {-1, 0.5, 10, 20};
  std::vector<Mlp*> local;
  for (std::size_t k = 0; k < 4; ++k) {
    models[k].layers[0].kernel(0, 0) = kernels[k];
    models[k].layers[0].bias(0) = biases[k];
    local.push_back(&models[k]);
  }
  make_local_averager()->average_groups(local, 2);
  const double want_kernel[4] = {1.5, 1.5, 4.5, 4.5}, want_bias[4] = {-0.25, -0.25, 15, 15};
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK(models[k].layers[0].kernel(0, 0) == want_kernel[k]);
    CHECK(models[k].layers[0].bias(0) == want_bias[k]);
  }
}

TEST_CASE("hierarchical local SGD follows the schedule of group and global means, and differs from flat") {
  // Full-shard batches (FedSGD steps), so the reference below needs no minibatch order: every worker takes
  // --period steps, its group of 2 is averaged, twice, then all 4 are averaged (P = 3 H), for 2 rounds.
  LocalSgdOptions o = groups_of_two("hier", 6);
  o.batch = 0;
  o.rounds = 2;
  auto averager = make_local_averager();
  const RunSummary s = run_builtin(o, *averager);
  CHECK(s.steps == 12);

  Dataset all = load_csv(o.data, o.label_col), train, test;
  split_train_test(all, o.test_fraction, train, test);
  scale_features(train, test);
  const std::vector<Dataset> shards = make_shards(train, o.workers, o.shard, o.seed);
  Mlp global(64, o.hidden, 10), grad = global;
  global.init_glorot(hash_key(o.seed, 0x1417));
  Workspace ws;
  // The mean of models[first..first+n) in plain loops, summed in worker order and divided once.
  auto mean_into = [](std::vector<Mlp>& models, std::size_t first, std::size_t n, Mlp& out) {
    std::vector<ParamRef> dst = out.params();
    for (std::size_t i = 0; i < dst.size(); ++i)
      for (std::uint64_t j = 0; j < dst[i].info.count(); ++j) {
        double sum = 0;
        for (std::size_t k = first; k < first + n; ++k) sum += models[k].params()[i].data[j];
        dst[i].data[j] = sum / static_cast<double>(n);
      }
  };
  for (std::uint64_t round = 0; round < o.rounds; ++round) {
    std::vector<Mlp> models(o.workers, global);
    for (int phase = 0; phase < 3; ++phase) {
      for (std::size_t k = 0; k < o.workers; ++k) {
        std::vector<std::size_t> rows(shards[k].rows());
        for (std::size_t r = 0; r < rows.size(); ++r) rows[r] = r;
        for (int t = 0; t < 2; ++t) {
          gradient(models[k], shards[k], rows, grad, ws);
          std::vector<ParamRef> w = models[k].params(), g = grad.params();
          for (std::size_t i = 0; i < w.size(); ++i)
            for (std::uint64_t j = 0; j < w[i].info.count(); ++j) w[i].data[j] -= o.lr * g[i].data[j];
        }
      }
      if (phase < 2) {
        for (std::size_t first = 0; first < o.workers; first += 2) {
          Mlp m = global;
          mean_into(models, first, 2, m);
          models[first] = models[first + 1] = m;
        }
      } else {
        mean_into(models, 0, o.workers, global);
      }
    }
  }
  Mlp got = final_model(o);
  // The driver sums each gradient over its rows in another order, hence a tolerance rather than equal bits.
  CHECK(max_relative_difference(got, global) < 1e-9);

  // Flat averaging every 2 steps, and every 6 steps, over the same 12 steps: both differ.
  LocalSgdOptions every_h = o, every_p = o;
  every_h.out_dir = temp_dir("flat_h").string();
  every_p.out_dir = temp_dir("flat_p").string();
  every_h.group_size = every_p.group_size = 0;
  every_h.rounds = 6;
  every_p.period = 6;
  run_builtin(every_h, *averager);
  run_builtin(every_p, *averager);
  Mlp flat_h = final_model(every_h), flat_p = final_model(every_p);
  CHECK(max_relative_difference(got, flat_h) > 1e-6);
  CHECK(max_relative_difference(got, flat_p) > 1e-6);
}

TEST_CASE("a resumed hierarchical run ends where an uninterrupted one does; other groups are refused") {
  LocalSgdOptions o = groups_of_two("hier_resume", 4);
  o.rounds = 4;
  const Resumed r = straight_and_resumed(o, "hier_resume");
  CHECK(r.summary.steps == 16);
  CHECK(r.difference == 0.0);
  LocalSgdOptions flat = r.split;
  flat.group_size = flat.group_period = 0;
  auto a = make_local_averager();
  CHECK_THROWS_WITH(run_builtin(flat, *a), doctest::Contains("--resume: group_period was 4, now null"));
}

TEST_CASE("hierarchical rounds start after the warm-up: rounds of 1 step, then of P steps") {
  LocalSgdOptions o = groups_of_two("hier_warmup", 4);
  o.warmup_steps = 3;
  o.rounds = 5;
  auto a = make_local_averager();
  CHECK(run_builtin(o, *a).steps == 3 + 2 * 4);
}
