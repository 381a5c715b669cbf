// TensorFlow.js: the samples under samples/tfjs/ were written by the reference implementation (tensorflowjs 4.22.0,
// samples/tfjs/make_tfjs.py); values are checked against their closed form and against expected.json, which holds
// the reference reader's (read_weights.py) values. The writer's output is checked member by member.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/temp_dir.hpp"
#include "tfjs/tfjs.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/error.hpp"

using namespace wavg;
using wavg::test::TempDir;

namespace {

const std::string k_dir = std::string(WAVG_SAMPLES_DIR) + "/tfjs/";

std::vector<float> read_f32(Reader& r, std::size_t i) {
  std::vector<float> v(r.tensors()[i].count());
  r.read(i, 0, v.size(), v.data());
  return v;
}

nlohmann::json expected() { return nlohmann::json::parse(wavg::test::read_all(k_dir + "expected.json")); }

}  // namespace

TEST_CASE("tfjs reads a layers model whose weights span shards, matching the closed form") {
  TfjsReader r(k_dir + "a/model.json");
  CHECK(r.format_name() == "TensorFlow.js");
  CHECK(r.layout() == "layers model");
  REQUIRE(r.tensors().size() == 4);
  const char* names[] = {"dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"};
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK(r.tensors()[k].name == names[k]);
    CHECK(r.tensors()[k].dtype == DType::f32);
    const auto v = read_f32(r, k);
    for (std::size_t i = 0; i < v.size(); ++i)
      CHECK(v[i] == static_cast<float>(static_cast<double>(i + 1) / 8.0 * static_cast<double>(k + 1) - 0.5));
  }
  CHECK(r.tensors()[0].shape == Shape{3, 4});
  // dense/kernel's bytes 0..47 lie in shard 1 (40 bytes) and shard 2: elements 9..11 come from shard 2.
  float part[4];
  r.read(0, 8, 4, part);
  CHECK(part[0] == 0.625f);
  CHECK(part[3] == 1.0f);
  CHECK(r.view(0, 8, 4) == nullptr);  // spans two shards
  CHECK(r.view(0, 0, 4) != nullptr);
  CHECK(r.metadata().at("format") == "layers-model");
  CHECK(r.metadata().at("source") == "make_tfjs.py a");
}

TEST_CASE("tfjs dequantises uint8, uint16 and float16 weights as the reference reader does") {
  const auto want = expected();
  for (const char* model : {"q8", "q16", "f16"}) {
    CAPTURE(model);
    TfjsReader r(k_dir + model + "/model.json");
    for (std::size_t k = 0; k < r.tensors().size(); ++k) {
      const auto v = read_f32(r, k);
      const auto& e = want.at(std::string(model) + "/" + r.tensors()[k].name);
      REQUIRE(e.size() == v.size());
      for (std::size_t i = 0; i < v.size(); ++i) CHECK(v[i] == static_cast<float>(e[i].get<double>()));
    }
  }
}

TEST_CASE("tfjs reads a graph model with two groups and an int32 weight") {
  TfjsReader r(k_dir + "graph/model.json");
  CHECK(r.layout() == "graph model");
  REQUIRE(r.tensors().size() == 3);
  CHECK(r.tensors()[2].name == "step");
  CHECK(r.tensors()[2].dtype == DType::i32);
  std::int32_t step[2];
  r.read(2, 0, 2, step);
  CHECK(step[0] == 7);
  CHECK(step[1] == -3);
  const auto b = read_f32(r, 1);
  CHECK(b == std::vector<float>{2.0f, 1.9375f, 1.875f});
}

TEST_CASE("tfjs writer keeps model.json's members and shards the weights atomically") {
  TempDir dir;
  TfjsReader in(k_dir + "a/model.json");
  OutputSpec spec{in.tensors(), &in, {}, Provenance(std::map<std::string, std::string>{{"wavg_command", "merge"}})};
  const std::string target = dir / "avg.json";
  {
    AtomicFile out(target, Overwrite::no);
    auto w = create_tfjs_writer(out.tmp_path(), target, spec);
    for (std::size_t k = 0; k < spec.tensors.size(); ++k) {
      std::vector<float> v(spec.tensors[k].count(), static_cast<float>(k) + 0.5f);
      w->write(k, 0, v.size(), v.data());
    }
    w->finish();
    w.reset();
    out.commit();
  }
  const auto doc = nlohmann::ordered_json::parse(wavg::test::read_all(target));
  const auto src = nlohmann::ordered_json::parse(wavg::test::read_all(k_dir + "a/model.json"));
  CHECK(doc["modelTopology"] == src["modelTopology"]);
  CHECK(doc["format"] == "layers-model");
  CHECK(doc["convertedBy"] == src["convertedBy"]);
  CHECK(doc["userDefinedMetadata"]["source"] == "make_tfjs.py a");
  CHECK(doc["userDefinedMetadata"]["wavg"]["wavg_command"] == "merge");
  CHECK(doc["weightsManifest"][0]["paths"] == nlohmann::ordered_json::array({"avg-shard1of1.bin"}));
  CHECK(doc["weightsManifest"][0]["weights"][2] ==
        nlohmann::ordered_json({{"name", "dense_1/kernel"}, {"shape", {4, 2}}, {"dtype", "float32"}}));
  const std::string shard = wavg::test::read_all(dir / "avg-shard1of1.bin");
  REQUIRE(shard.size() == 104);
  float v;
  std::memcpy(&v, shard.data() + 12 * 4 + 4 * 4, 4);  // dense_1/kernel[0], after 12 + 4 floats
  CHECK(v == 2.5f);
  TfjsReader back(target);
  CHECK(back.metadata().at("wavg_command") == "merge");
}

// An output `name` in a fresh folder, with sample a/model.json as its input 1.
struct SampleOutput {
  explicit SampleOutput(const std::string& name) : target(dir / name) {}
  TempDir dir;
  TfjsReader in{k_dir + "a/model.json"};
  OutputSpec spec{in.tensors(), &in, {}, {}};
  std::string target;
};

TEST_CASE("tfjs writer leaves no shard behind when the output is not committed") {
  SampleOutput o("x.json");
  {
    AtomicFile out(o.target, Overwrite::no);
    auto w = create_tfjs_writer(out.tmp_path(), o.target, o.spec);
  }
  CHECK(std::filesystem::is_empty(o.dir.path()));
}

TEST_CASE("tfjs writer refuses dtypes TF.js cannot hold") {
  TempDir dir;
  OutputSpec spec{{{"x", DType::f64, {2}}}, nullptr, {}, {}};
  AtomicFile out(dir / "x.json", Overwrite::no);
  const std::string want = dir / "x.json" +
                           ": TF.js holds float32, int32 and bool weights; x is float64 (use --out-dtype float32)";
  CHECK_THROWS_WITH_AS(create_tfjs_writer(out.tmp_path(), dir / "x.json", spec), want.c_str(), Error);
}

TEST_CASE("tfjs writer refuses an integer tensor naming the --exclude that leaves it out") {
  // --out-dtype retypes floats only, so for an int64 tensor it would fail the same way.
  TempDir dir;
  OutputSpec spec{{{"bn.num_batches_tracked", DType::i64, {}}}, nullptr, {}, {}};
  AtomicFile out(dir / "x.json", Overwrite::no);
  const std::string want = dir / "x.json" +
                           ": TF.js holds float32, int32 and bool weights; bn.num_batches_tracked is int64 (leave it "
                           "out with --exclude 'bn.num_batches_tracked')";
  CHECK_THROWS_WITH_AS(create_tfjs_writer(out.tmp_path(), dir / "x.json", spec), want.c_str(), Error);
}

TEST_CASE("tfjs output whose shard target appears before commit: nothing is placed") {
  SampleOutput o("y.json");
  AtomicFile out(o.target, Overwrite::no);
  {
    auto w = create_tfjs_writer(out.tmp_path(), o.target, o.spec);
    w->finish();
  }
  o.dir.write("y-shard1of1.bin", "someone else's");
  CHECK_THROWS_AS(out.commit(), Error);
  CHECK(!std::filesystem::exists(o.target));
  CHECK(wavg::test::read_all(o.dir / "y-shard1of1.bin") == "someone else's");
}
