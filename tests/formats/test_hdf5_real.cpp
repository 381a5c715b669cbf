// Real Keras files from ../shared/real-checkpoints (groups G1 and G2 of its PROVENANCE.md): wavg's merge of each
// group is compared, tensor by tensor, with the mean computed here from the inputs read by the plain HDF5 C API.

#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/h5raw.hpp"
#include "support/run.hpp"

using namespace wavg::test;

namespace {

// Checks every float dataset of `out` against the float32-rounded mean of the inputs, and every other dataset
// against input 1; returns the number of datasets compared.
std::size_t check_mean(const std::vector<std::string>& inputs, const std::string& out) {
  std::size_t compared = 0;
  for (const std::string& name : list_datasets(out)) {
    const auto got = read_doubles(out, name);
    const bool is_float32 = read_bytes(out, name).size() == got.size() * 4 && name.find("iter") == std::string::npos;
    std::vector<double> sum(got.size(), 0.0);
    for (const auto& in : inputs) {
      const auto x = read_doubles(in, name);
      REQUIRE(x.size() == got.size());
      for (std::size_t i = 0; i < x.size(); ++i) sum[i] += x[i];
    }
    const auto first = read_doubles(inputs.front(), name);
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double want =
          is_float32 ? static_cast<double>(static_cast<float>(sum[i] / static_cast<double>(inputs.size()))) : first[i];
      if (got[i] != want) {
        FAIL_CHECK(name << "[" << i << "]: got " << got[i] << ", expected " << want);
        break;
      }
    }
    ++compared;
  }
  return compared;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += "'" + x + "' ";
  return s;
}

struct RealMerge {
  RunResult run;
  std::size_t compared = 0;  // check_mean's count
};

// Merges the files `names` of real-checkpoints/`group`/ and checks the output against their mean; returns wavg's
// result and the number of datasets compared, or nothing when ../shared is absent (the test is then skipped).
std::optional<RealMerge> merge_real(const std::string& group, const std::vector<std::string>& names) {
  const std::string shared = shared_dir();
  if (shared.empty()) {
    MESSAGE("skipped: ../shared/real-checkpoints is absent");
    return std::nullopt;
  }
  std::vector<std::string> inputs;
  for (const std::string& name : names) inputs.push_back(shared + "/real-checkpoints/" + group + "/" + name);
  TempDir tmp;
  const std::string out = tmp / (group + ".h5");
  RunResult r = run_wavg("merge " + join(inputs) + "-o " + out);
  REQUIRE(r.exit_code == 0);
  const std::size_t compared = check_mean(inputs, out);
  return RealMerge{std::move(r), compared};
}

}  // namespace

TEST_CASE("G1: the ebot64 Keras 2.10 epoch checkpoints (model + Adam state) merge to their mean") {
  const auto m = merge_real(
      "ebot64-pima-epochs",
      {"weights-improvement-01-0.33.hdf5", "weights-improvement-08-0.68.hdf5", "weights-improvement-145-0.75.hdf5"});
  if (!m) return;
  CHECK(m->run.out.find("merged 3 inputs (Keras 2 model)") == 0);
  // 6 model tensors + 12 Adam moments + the int64 iteration counter.
  CHECK(m->compared == 19);
}

TEST_CASE("G1: weights.best.hdf5 uses other layer names and is reported, not merged") {
  const std::string shared = shared_dir();
  if (shared.empty()) return;
  const std::string dir = shared + "/real-checkpoints/ebot64-pima-epochs/";
  const auto r = run_wavg("check '" + dir + "weights-improvement-01-0.33.hdf5' '" + dir + "weights.best.hdf5'");
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("weights.best.hdf5: model_weights/dense_3/dense_3/kernel:0: missing") != std::string::npos);
}

TEST_CASE("G2: the three hls4ml Keras 2.3 full models (fixed-length string attributes) merge to their mean") {
  const auto m = merge_real("hls4ml-keras3layer-full", {"keras_3layer.h5", "keras_3layer_70pruned_retrained.h5",
                                                        "keras_3layer_95pruned_retrained.h5"});
  if (m) CHECK(m->compared == 8);
}

TEST_CASE("G2: the three hls4ml Keras 2.0/2.1 weights-only files merge to their mean") {
  const auto m =
      merge_real("hls4ml-keras3layer-weights", {"KERAS_3layer_weights.h5", "KERAS_3layer_70pruned_retrained_weights.h5",
                                                "KERAS_3layer_95pruned_retrained_weights.h5"});
  if (!m) return;
  CHECK(m->run.out.find("(Keras 2 weights)") != std::string::npos);
  CHECK(m->compared == 8);
}

TEST_CASE("the real Keras files are detected as the layout they are") {
  const std::string shared = shared_dir();
  if (shared.empty()) return;
  const std::string rc = shared + "/real-checkpoints/";
  CHECK(run_wavg("inspect '" + rc + "ebot64-pima-epochs/model.h5'").out.find("Keras 2 weights") != std::string::npos);
  CHECK(run_wavg("inspect '" + rc + "ebot64-pima-epochs/weights.best.hdf5'").out.find("Keras 2 model") !=
        std::string::npos);
  // Keras 3.4.1's legacy writer: weight names without ":0" and a model prefix.
  const auto legacy = run_wavg("inspect --json '" + rc + "pima-k3-siva1204tharsh/model_legacy_keras341.h5'");
  CHECK(legacy.exit_code == 0);
  CHECK(legacy.out.find("\"model_weights/dense/sequential/dense/kernel\"") != std::string::npos);
}
