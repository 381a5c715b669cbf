// Spec inference for align (src/align/state_dict_spec.cpp, perm_spec.cpp): a PyTorch-style state_dict in a
// safetensors file the test writes (support/safetensors_bytes.hpp), and a Keras 2 model_config beside tensors named
// as Keras 2 names them; each tensor's permuted axes are the ones the architecture pins down by hand.
#include <doctest/doctest.h>

#include "align/state_dict_spec.hpp"
#include "safetensors/safetensors.hpp"
#include "support/safetensors_bytes.hpp"
#include "support/temp_dir.hpp"
#include "wavg/align.hpp"
#include "wavg/error.hpp"

using namespace wavg;
using wavg::test::F32Tensor;
using wavg::test::TempDir;

namespace {

F32Tensor zeros(const std::string& name, std::vector<std::uint64_t> shape) {
  std::uint64_t n = 1;
  for (auto d : shape) n *= d;
  return {name, std::move(shape), std::vector<float>(n, 0.0f)};
}

// Tensor `name`'s entry in the spec.
const align::TensorPerm& perm(const align::PermSpec& spec, const Reader& r, const std::string& name) {
  for (std::size_t i = 0; i < r.tensors().size(); ++i)
    if (r.tensors()[i].name == name) return spec.tensors.at(i);
  FAIL("no tensor " << name);
  return spec.tensors.front();
}

// A reader of tensor names and shapes with a Keras model_config in its metadata (a Keras 2 .h5's root attribute).
class ConfigOnly final : public Reader {
 public:
  ConfigOnly(std::vector<TensorInfo> tensors, std::string config) : m_tensors(std::move(tensors)) {
    m_meta["model_config"] = std::move(config);
  }
  const std::string& path() const override { return m_path; }
  std::string format_name() const override { return "test"; }
  std::string layout() const override { return "test"; }
  const std::vector<TensorInfo>& tensors() const override { return m_tensors; }
  void read(std::size_t, std::uint64_t, std::uint64_t, void*) override {}
  std::map<std::string, std::string> metadata() const override { return m_meta; }

 private:
  std::string m_path = "model.h5";
  std::vector<TensorInfo> m_tensors;
  std::map<std::string, std::string> m_meta;
};

}  // namespace

TEST_CASE("a Linear chain's state_dict: each hidden layer's units permute its rows, its bias and the next input") {
  TempDir dir;
  SafetensorsReader r(dir.write(
      "m.safetensors",
      test::safetensors_bytes({zeros("fc1.weight", {4, 3}), zeros("fc1.bias", {4}), zeros("fc2.weight", {5, 4}),
                               zeros("fc2.bias", {5}), zeros("fc3.weight", {2, 5}), zeros("fc3.bias", {2})})));
  const align::PermSpec spec = align::state_dict_spec(r);
  REQUIRE(spec.group_sizes == std::vector<std::uint64_t>{4, 5});
  CHECK(perm(spec, r, "fc1.weight").axes[0].group == 0);
  CHECK(perm(spec, r, "fc1.weight").axes[1].group == -1);  // the model's input
  CHECK(perm(spec, r, "fc1.bias").axes[0].group == 0);
  CHECK(perm(spec, r, "fc2.weight").axes[0].group == 1);
  CHECK(perm(spec, r, "fc2.weight").axes[1].group == 0);
  CHECK(perm(spec, r, "fc3.weight").axes[1].group == 1);
  CHECK(perm(spec, r, "fc3.weight").axes[0].group == -1);  // the model's output
  CHECK(!perm(spec, r, "fc3.bias").permuted());
  // make_spec infers it only on the user's word (--assume-sequential).
  CHECK_THROWS_AS(align::make_spec(r, {}), Error);
  align::SpecSource sequential;
  sequential.assume_sequential = true;
  CHECK(align::make_spec(r, sequential).group_sizes == spec.group_sizes);
}

TEST_CASE("a Conv then Linear state_dict: the flattened input axis repeats each channel over its positions") {
  TempDir dir;
  SafetensorsReader r(dir.write(
      "m.safetensors", test::safetensors_bytes({zeros("layers.0.weight", {8, 3, 3, 3}), zeros("layers.0.bias", {8}),
                                                zeros("layers.1.weight", {10, 32}), zeros("layers.1.bias", {10})})));
  const align::PermSpec spec = align::state_dict_spec(r);
  REQUIRE(spec.group_sizes == std::vector<std::uint64_t>{8});
  const align::AxisPerm in = perm(spec, r, "layers.1.weight").axes[1];
  CHECK(in.group == 0);
  CHECK(in.outer == 1);  // channels first, as PyTorch flattens NCHW
  CHECK(in.inner == 4);  // 32 = 8 channels x 4 positions
  CHECK(perm(spec, r, "layers.0.weight").axes[0].group == 0);
  for (std::size_t a = 1; a < 4; ++a) CHECK(perm(spec, r, "layers.0.weight").axes[a].group == -1);
}

TEST_CASE("a state_dict that names do not pin down is refused as a usage error, naming the tensor") {
  TempDir dir;
  // A one-dimensional weight without running statistics: a LayerNorm, a GroupNorm or an untracked BatchNorm.
  SafetensorsReader r(dir.write(
      "m.safetensors", test::safetensors_bytes({zeros("layers.0.weight", {4, 3}), zeros("layers.1.weight", {4}),
                                                zeros("layers.2.weight", {2, 4})})));
  try {
    align::state_dict_spec(r);
    FAIL("inferred");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
    CHECK(e.problems().at(0).what.find("layers.1.weight") != std::string::npos);
  }
}

TEST_CASE("a Keras 2 model_config: Dense, BatchNormalization and the optimizer's slots follow their layer") {
  const std::string config = R"({"class_name": "Sequential", "config": {"name": "s", "layers": [)"
                             R"({"class_name": "Dense", "config": {"name": "dense", "units": 6}},)"
                             R"({"class_name": "BatchNormalization", "config": {"name": "bn"}},)"
                             R"({"class_name": "Dense", "config": {"name": "dense_1", "units": 2}}]}})";
  ConfigOnly r({{"model_weights/dense/dense/kernel:0", DType::f32, {3, 6}},
                {"model_weights/dense/dense/bias:0", DType::f32, {6}},
                {"model_weights/bn/bn/gamma:0", DType::f32, {6}},
                {"model_weights/bn/bn/beta:0", DType::f32, {6}},
                {"model_weights/bn/bn/moving_mean:0", DType::f32, {6}},
                {"model_weights/bn/bn/moving_variance:0", DType::f32, {6}},
                {"model_weights/dense_1/dense_1/kernel:0", DType::f32, {6, 2}},
                {"model_weights/dense_1/dense_1/bias:0", DType::f32, {2}},
                {"optimizer_weights/Adam/dense/kernel/m:0", DType::f32, {3, 6}}},
               config);
  const align::PermSpec spec = align::make_spec(r, {});
  REQUIRE(spec.group_sizes == std::vector<std::uint64_t>{6});
  CHECK(spec.source == "Keras model_config");
  CHECK(spec.tensors[0].axes[1].group == 0);
  CHECK(spec.tensors[0].axes[0].group == -1);
  for (std::size_t bn = 2; bn < 6; ++bn) CHECK(spec.tensors[bn].axes[0].group == 0);  // gamma .. moving_variance
  CHECK(spec.tensors[6].axes[0].group == 0);
  CHECK(!spec.tensors[7].permuted());
  CHECK(spec.tensors[8].role == align::Role::slot);
  CHECK(spec.tensors[8].axes[1].group == 0);
}
