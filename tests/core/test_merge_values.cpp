// merge over the closed-form samples (samples/README.md): the expected values come from the formulas, not from wavg.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "support/h5raw.hpp"
#include "support/run.hpp"

using namespace wavg::test;

namespace {

const std::string k_samples = WAVG_SAMPLES_DIR;

double base(int t, std::uint64_t i) { return static_cast<double>(static_cast<int>((3 * i + t) % 17) - 8) / 16.0; }

std::string node(int k) { return k_samples + "/mlp/node" + std::to_string(k) + ".h5"; }

struct Weight {
  const char* name;
  int t;
};
constexpr Weight k_weights[] = {{"model_weights/dense/dense/kernel:0", 0},
                                {"model_weights/dense/dense/bias:0", 1},
                                {"model_weights/dense_1/dense_1/kernel:0", 2},
                                {"model_weights/dense_1/dense_1/bias:0", 3}};

}  // namespace

TEST_CASE("the mean of the three sample nodes is base(t, i) exactly") {
  TempDir dir;
  const auto m = run_wavg("merge " + node(1) + " " + node(2) + " " + node(3) + " -o " + (dir / "mean.h5") + " -q");
  REQUIRE(m.exit_code == 0);
  CHECK(m.out.empty());
  for (const Weight& w : k_weights) {
    const auto got = read_doubles(dir / "mean.h5", w.name);
    for (std::uint64_t i = 0; i < got.size(); ++i) CHECK(got[i] == base(w.t, i));
  }
  // Adam moments: m = base/2 exactly, v = |base| + 0.5 exactly; the iteration counter is input 1's (100).
  const auto m0 = read_doubles(dir / "mean.h5", "optimizer_weights/Adam/dense/kernel/m:0");
  const auto v0 = read_doubles(dir / "mean.h5", "optimizer_weights/Adam/dense/kernel/v:0");
  for (std::uint64_t i = 0; i < m0.size(); ++i) {
    CHECK(m0[i] == base(0, i) / 2);
    CHECK(v0[i] == std::fabs(base(0, i)) + 0.5);
  }
  CHECK(read_doubles(dir / "mean.h5", "optimizer_weights/Adam/iter:0").at(0) == 100);
}

TEST_CASE("weights 1,3,2 give (1*x1 + 3*x2 + 2*x3) / 6 rounded once to float32") {
  TempDir dir;
  const auto m = run_wavg("merge " + node(1) + " " + node(2) + " " + node(3) + " -w 1,3,2 -o " + (dir / "w.h5"));
  REQUIRE(m.exit_code == 0);
  for (const Weight& w : k_weights) {
    const auto got = read_doubles(dir / "w.h5", w.name);
    for (std::uint64_t i = 0; i < got.size(); ++i) {
      // node k holds base + (k-2)/4, so the weighted sum is 6*base + (1*-1 + 3*0 + 2*1)/4.
      const double expected = (6 * base(w.t, i) + 0.25) / 6;
      CHECK(got[i] == static_cast<double>(static_cast<float>(expected)));
    }
  }
}

TEST_CASE("float16, float64 and chunked gzip float32 tensors average to c(i) + 0.125 in their own dtype") {
  TempDir dir;
  const std::string a = k_samples + "/dtypes/a.h5", b = k_samples + "/dtypes/b.h5";
  const auto m = run_wavg("merge " + a + " " + b + " -o " + (dir / "d.h5"));
  REQUIRE(m.exit_code == 0);
  auto c = [](std::uint64_t i) { return static_cast<double>(static_cast<int>((7 * i) % 11) - 5) / 8.0; };
  for (const char* name : {"layer1/w", "layer1/b", "layer2/w"}) {
    const auto got = read_doubles(dir / "d.h5", name);
    REQUIRE(!got.empty());
    for (std::uint64_t i = 0; i < got.size(); ++i) CHECK(got[i] == c(i) + 0.125);
  }
  // The output keeps each dataset's dtype: byte sizes as in input 1.
  CHECK(read_bytes(dir / "d.h5", "layer1/w").size() == 15 * 2);
  CHECK(read_bytes(dir / "d.h5", "layer1/b").size() == 5 * 8);
  // Non-float tensors are input 1's.
  CHECK(read_doubles(dir / "d.h5", "step").at(0) == 10);
  const auto table = read_doubles(dir / "d.h5", "quant/table");
  for (std::uint64_t i = 0; i < table.size(); ++i) CHECK(table[i] == static_cast<double>(i) - 5);
}

TEST_CASE("the output is bit-identical for 1 and 4 threads") {
  // 3 inputs of 1.5M pseudo-random float32 values (enough for the parallel kernel), from a fixed LCG.
  TempDir dir;
  std::uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(static_cast<double>(state >> 11) / 9007199254740992.0 * 2 - 1);
  };
  std::string inputs;
  for (int k = 0; k < 3; ++k) {
    std::vector<float> big(1500 * 1000), small(777);
    for (auto& v : big) v = next();
    for (auto& v : small) v = next() * 1e-3f;
    const std::string path = dir / ("in" + std::to_string(k) + ".h5");
    write_floats(path, "layer/big", {1500, 1000}, big, true);
    write_floats(path, "layer/small", {777}, small, false);
    inputs += path + " ";
  }
  const auto one = run_wavg("merge " + inputs + "-w 0.3,1.7,2.9 -o " + (dir / "t1.h5"), "OMP_NUM_THREADS=1");
  const auto four = run_wavg("merge " + inputs + "-w 0.3,1.7,2.9 -o " + (dir / "t4.h5"), "OMP_NUM_THREADS=4");
  REQUIRE(one.exit_code == 0);
  REQUIRE(four.exit_code == 0);
  for (const char* name : {"layer/big", "layer/small"})
    CHECK(read_bytes(dir / "t1.h5", name) == read_bytes(dir / "t4.h5", name));
  // And the values are the weighted mean computed here in the same order.
  const auto x0 = read_doubles(dir / "in0.h5", "layer/small"), x1 = read_doubles(dir / "in1.h5", "layer/small"),
             x2 = read_doubles(dir / "in2.h5", "layer/small"), got = read_doubles(dir / "t1.h5", "layer/small");
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double acc = 0.3 * x0[i] + 1.7 * x1[i] + 2.9 * x2[i];
    CHECK(got[i] == static_cast<double>(static_cast<float>(acc / (0.3 + 1.7 + 2.9))));
  }
}

TEST_CASE("--tensors intersection averages the common tensors and drops the others from the output") {
  TempDir dir;
  write_floats(dir / "a.h5", "shared/w", {2, 2}, {1, 2, 3, 4}, true);
  write_floats(dir / "a.h5", "only_a", {1}, {5}, false);
  write_floats(dir / "b.h5", "shared/w", {2, 2}, {3, 4, 5, 6}, true);
  write_floats(dir / "b.h5", "only_b", {1}, {7}, false);
  const std::string args = "merge " + (dir / "a.h5") + " " + (dir / "b.h5") + " -o " + (dir / "i.h5");
  const auto strict = run_wavg(args);
  CHECK(strict.exit_code == 3);
  CHECK(strict.err.find("only_a: missing") != std::string::npos);
  CHECK(strict.err.find("only_b: not in") != std::string::npos);
  const auto inter = run_wavg(args + " --tensors intersection");
  REQUIRE(inter.exit_code == 0);
  CHECK(inter.err == "wavg: dropped 2 tensor(s) missing from some inputs (--tensors intersection)\n");
  CHECK(list_datasets(dir / "i.h5") == std::vector<std::string>{"shared/w"});
  CHECK(read_doubles(dir / "i.h5", "shared/w") == std::vector<double>{2, 3, 4, 5});
}
