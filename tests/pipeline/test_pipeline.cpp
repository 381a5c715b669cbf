// The conductor (src/pipeline): an output target checked before any input opens (check_target), its format settled
// from the inputs (settle), and run() over small safetensors files the test writes with its own bytes, the outputs
// parsed by the test (support/safetensors_bytes.hpp) and compared with closed-form means.
#include <doctest/doctest.h>

#include <filesystem>
#include <type_traits>

#include "pipeline/pipeline.hpp"
#include "support/safetensors_bytes.hpp"
#include "support/temp_dir.hpp"
#include "wavg/error.hpp"
#include "wavg/task_methods.hpp"

using namespace wavg;
using wavg::test::F32Tensor;
using wavg::test::TempDir;

namespace {

// A reader no file backs, in a given format: what settle() and output_format() see of an input.
class FormatOnly final : public Reader {
 public:
  FormatOnly(std::string path, FormatId id) : m_path(std::move(path)), m_id(id) {}
  const std::string& path() const override { return m_path; }
  FormatId format() const override { return m_id; }
  std::string format_name() const override { return codec(m_id).display; }
  std::string layout() const override { return "test"; }
  const std::vector<TensorInfo>& tensors() const override { return m_tensors; }
  void read(std::size_t, std::uint64_t, std::uint64_t, void*) override {}
  std::map<std::string, std::string> metadata() const override { return {}; }

 private:
  std::string m_path;
  FormatId m_id;
  std::vector<TensorInfo> m_tensors;
};

// Returns the exit code of the Error `f` throws (success when it throws none).
template <typename F>
ExitCode error_code(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return ExitCode::success;
}

pipeline::TargetOptions target(const std::string& path, const std::string& format = "") {
  pipeline::TargetOptions o;
  o.path = path;
  o.format = format;
  return o;
}

// Two inputs: w = [k, 2k, 3k, 4k] (2 x 2) and b = [-k] for k = 1 and 3.
std::vector<std::string> write_inputs(const TempDir& dir) {
  std::vector<std::string> paths;
  for (float k : {1.0f, 3.0f})
    paths.push_back(dir.write("in" + std::to_string(static_cast<int>(k)) + ".safetensors",
                              test::safetensors_bytes({{"w", {2, 2}, {k, 2 * k, 3 * k, 4 * k}}, {"b", {1}, {-k}}})));
  return paths;
}

}  // namespace

TEST_CASE("check_target settles what the output's name and --format say, before any input opens") {
  TempDir dir;
  CHECK(pipeline::check_target(target(dir / "o.safetensors"), {}).format_id() == FormatId::safetensors);
  CHECK(pipeline::check_target(target(dir / "o.h5"), {}).format_id() == FormatId::hdf5);
  CHECK(pipeline::check_target(target(dir / "o.bin", "safetensors"), {}).format_id() == FormatId::safetensors);
  CHECK(pipeline::check_target(target(dir / "out/"), {}).format_id() == FormatId::hf);
  CHECK(pipeline::check_target(target("-", "npz"), {}).format_id() == FormatId::npz);
  // A name that says nothing, and .ckpt, wait for the inputs.
  CHECK(pipeline::check_target(target(dir / "ckpt-5"), {}).format_id() == FormatId::none);
  CHECK(pipeline::check_target(target(dir / "m.ckpt"), {}).format_id() == FormatId::none);
}

TEST_CASE("check_target refuses a bad target as a usage error") {
  TempDir dir;
  CHECK(error_code([&] { pipeline::check_target(target(dir / "o.safetensors", "nope"), {}); }) == ExitCode::usage);
  CHECK(error_code([&] { pipeline::check_target(target(dir / "o.xyz"), {}); }) == ExitCode::usage);
  CHECK(error_code([&] { pipeline::check_target(target("-"), {}); }) == ExitCode::usage);          // no --format
  CHECK(error_code([&] { pipeline::check_target(target("-", "hf"), {}); }) == ExitCode::usage);    // a folder
  CHECK(error_code([&] { pipeline::check_target(target("-", "tfjs"), {}); }) == ExitCode::usage);  // companions
  auto tf_state = target(dir / "o.safetensors");
  tf_state.tf_state = true;
  CHECK(error_code([&] { pipeline::check_target(tf_state, {}); }) == ExitCode::usage);
  auto shards = target(dir / "o.safetensors");
  shards.shard_size = 1000;
  CHECK(error_code([&] { pipeline::check_target(shards, {}); }) == ExitCode::usage);
  shards.path = dir / "out/";
  CHECK(pipeline::check_target(shards, {}).format_id() == FormatId::hf);
  // An existing output without --force, and an output that is an input.
  const std::string existing = dir.write("e.safetensors", "x");
  CHECK(error_code([&] { pipeline::check_target(target(existing), {}); }) == ExitCode::usage);
  auto forced = target(existing);
  forced.overwrite = Overwrite::yes;
  CHECK(error_code([&] { pipeline::check_target(forced, {}); }) == ExitCode::success);
  CHECK(error_code([&] { pipeline::check_target(forced, {existing}); }) == ExitCode::usage);
}

TEST_CASE("settle takes the format from the inputs where the name leaves it open") {
  TempDir dir;
  FormatOnly tf(dir / "model.ckpt-1", FormatId::tensorflow), pt(dir / "a.pt", FormatId::pytorch);
  FormatOnly tfjs(dir / "model.json", FormatId::tfjs), dcp(dir / "run", FormatId::dcp);
  FormatOnly st(dir / "a.safetensors", FormatId::safetensors);
  auto settled = [&](const std::string& path, std::vector<Reader*> inputs) {
    pipeline::Target t = pipeline::check_target(target(path), {});
    pipeline::settle(t, inputs);
    return t.format_id();
  };
  CHECK(settled(dir / "ckpt-5", {&pt, &pt}) == FormatId::pytorch);
  CHECK(settled(dir / "m.ckpt", {&tf}) == FormatId::tensorflow);
  CHECK(settled(dir / "m.ckpt", {&pt}) == FormatId::pytorch);
  CHECK(error_code([&] { settled(dir / "m.ckpt", {&st}); }) == ExitCode::usage);
  CHECK(error_code([&] { settled(dir / "ckpt-5", {&pt, &st}); }) == ExitCode::usage);  // several formats
  // .json is TF.js after a TF.js input 1, wavg JSON otherwise; a folder is DCP after a DCP input 1.
  CHECK(settled(dir / "o.json", {&tfjs}) == FormatId::tfjs);
  CHECK(settled(dir / "o.json", {&st}) == FormatId::json);
  CHECK(settled(dir / "out/", {&dcp}) == FormatId::dcp);
  CHECK(settled(dir / "out/", {&st}) == FormatId::hf);
}

TEST_CASE("run writes the weighted mean of the inputs to a file, and nothing when it fails") {
  TempDir dir;
  pipeline::Job job;
  job.inputs = write_inputs(dir);
  job.command = "merge";
  job.output = pipeline::check_target(target(dir / "out.safetensors"), job.inputs);
  pipeline::run(job);
  auto out = test::parse_safetensors(dir / "out.safetensors");
  CHECK(out.values["w"] == std::vector<float>{2, 4, 6, 8});
  CHECK(out.values["b"] == std::vector<float>{-2});
  CHECK(out.shapes["w"] == std::vector<std::uint64_t>{2, 2});
  CHECK(out.metadata.count("wavg_version") == 1);

  // Weights 3:1: (3 * k1 + 1 * k3) / 4 = 1.5.
  job.weights = {3, 1};
  job.output = pipeline::check_target(target(dir / "weighted.safetensors"), job.inputs);
  pipeline::run(job);
  out = test::parse_safetensors(dir / "weighted.safetensors");
  CHECK(out.values["w"] == std::vector<float>{1.5f, 3, 4.5f, 6});
  CHECK(out.values["b"] == std::vector<float>{-1.5f});

  // An input that is no checkpoint fails before anything is written.
  job.weights = {};
  job.inputs.push_back(dir.write("junk.safetensors", "junk"));
  job.output = pipeline::check_target(target(dir / "never.safetensors"), job.inputs);
  CHECK(error_code([&] { pipeline::run(job); }) == ExitCode::runtime);
  CHECK(!std::filesystem::exists(dir / "never.safetensors"));
}

TEST_CASE("run writes a Hugging Face folder, sharded by --shard-size, when the output names a folder") {
  TempDir dir;
  pipeline::Job job;
  job.inputs = write_inputs(dir);
  job.command = "merge";
  auto folder = target(dir / "model/");
  folder.shard_size = 8;  // b (4 bytes) and w (16 bytes) cannot share a shard
  job.output = pipeline::check_target(folder, job.inputs);
  pipeline::run(job);
  const auto index = nlohmann::json::parse(test::read_all(dir / "model/model.safetensors.index.json"));
  const std::string w_shard = index["weight_map"]["w"], b_shard = index["weight_map"]["b"];
  CHECK(w_shard != b_shard);
  CHECK(index["metadata"]["total_size"] == 20);
  CHECK(test::parse_safetensors(dir / ("model/" + w_shard)).values["w"] == std::vector<float>{2, 4, 6, 8});
  const auto b = test::parse_safetensors(dir / ("model/" + b_shard));
  CHECK(b.values.at("b") == std::vector<float>{-2});
  CHECK(b.metadata.at("format") == "pt");  // transformers refuses a shard without it
}

TEST_CASE("run lets a subcommand change one step: the method's weights") {
  struct QuarterThreeQuarters : pipeline::Steps {
    std::unique_ptr<Method> method(Backend& backend, const pipeline::Run&, const pipeline::Job&) override {
      return make_weighted_mean(backend, {1, 3});
    }
  };
  TempDir dir;
  pipeline::Job job;
  job.inputs = write_inputs(dir);
  job.command = "merge";
  job.output = pipeline::check_target(target(dir / "o.safetensors"), job.inputs);
  QuarterThreeQuarters steps;
  const pipeline::Run run = pipeline::run(job, steps);
  CHECK(run.output.format_id() == FormatId::safetensors);
  CHECK(run.templ.index == 0);
  CHECK(test::parse_safetensors(dir / "o.safetensors").values["w"] == std::vector<float>{2.5f, 5, 7.5f, 10});
}

TEST_CASE("run opens the job's base itself: matched against the plan, handed to the method, recorded") {
  // The base's w = [1, 1, 1, 1], b = [0]; task arithmetic (lambda 1) gives base + (x1 - base) + (x3 - base):
  // w = [1, 2, 3, 4] + [3, 6, 9, 12] - 1 = [3, 7, 11, 15], b = -1 - 3 - 0 = -4.
  struct OverBase : pipeline::Steps {
    std::unique_ptr<Method> method(Backend& backend, const pipeline::Run& run, const pipeline::Job&) override {
      REQUIRE(run.base);
      CHECK(run.base_source.size() == run.plan.entries.size());
      task.has_base = true;
      return make_task_method(backend, run.plan, task);
    }
    TaskOptions task;
  };
  TempDir dir;
  pipeline::Job job;
  job.inputs = write_inputs(dir);
  job.command = "merge";
  job.base = dir.write("base.safetensors", test::safetensors_bytes({{"w", {2, 2}, {1, 1, 1, 1}}, {"b", {1}, {0}}}));
  job.output = pipeline::check_target(target(dir / "o.safetensors"), job.inputs);
  OverBase steps;
  pipeline::run(job, steps);
  const auto out = test::parse_safetensors(dir / "o.safetensors");
  CHECK(out.values.at("w") == std::vector<float>{3, 7, 11, 15});
  CHECK(out.values.at("b") == std::vector<float>{-4});

  // A base whose w has another shape is refused before anything is written.
  job.base = dir.write("other.safetensors", test::safetensors_bytes({{"w", {4}, {1, 1, 1, 1}}, {"b", {1}, {0}}}));
  job.output = pipeline::check_target(target(dir / "never.safetensors"), job.inputs);
  CHECK(error_code([&] { pipeline::run(job, steps); }) == ExitCode::incompatible);
  CHECK(!std::filesystem::exists(dir / "never.safetensors"));
}

TEST_CASE("a Target is made only by its makers: check_target, and own_target for an output the program names") {
  static_assert(!std::is_aggregate_v<pipeline::Target>);
  static_assert(!std::is_constructible_v<pipeline::Target, pipeline::TargetOptions, FormatId>);
  static_assert(!std::is_constructible_v<pipeline::Target, pipeline::TargetOptions>);
  TempDir dir;
  // A checkpoint the program writes may replace an earlier one.
  const std::string path = dir.write("ckpt.h5", "old");
  const pipeline::Target t = pipeline::own_target(path, FormatId::hdf5);
  CHECK(t.path() == path);
  CHECK(t.format_id() == FormatId::hdf5);
  CHECK(t.overwrite() == Overwrite::yes);
  CHECK(error_code([&] { pipeline::check_target(target(path), {}); }) == ExitCode::usage);
}
