// Hugging Face folders (formats/hf/): a sharded folder the test writes byte by byte (index JSON, safetensors
// shards: support/safetensors_bytes.hpp) read back with its values, the index's distrust, and the writer's folder
// (one shard without an index, as save_pretrained writes it; the template folder's other files copied) parsed by
// the test.
#include <doctest/doctest.h>

#include <filesystem>

#include "hf/hf.hpp"
#include "support/safetensors_bytes.hpp"
#include "support/temp_dir.hpp"
#include "wavg/atomic_directory.hpp"
#include "wavg/error.hpp"

using namespace wavg;
using wavg::test::TempDir;

namespace {

constexpr char k_shard1[] = "model-00001-of-00002.safetensors";
constexpr char k_shard2[] = "model-00002-of-00002.safetensors";

// A folder of two shards: shard 1 holds b = [0.5, 1.5, 2.5] and a = [[1, 2], [3, 4]], shard 2 holds c = [-1].
std::string write_folder(const TempDir& dir, const std::string& index_text = "") {
  const std::string folder = dir / "model";
  std::filesystem::create_directories(folder);
  dir.write("model/" + std::string(k_shard1),
            test::safetensors_bytes({{"b", {3}, {0.5f, 1.5f, 2.5f}}, {"a", {2, 2}, {1, 2, 3, 4}}}, {{"format", "pt"}}));
  dir.write("model/" + std::string(k_shard2), test::safetensors_bytes({{"c", {1}, {-1}}}, {{"format", "pt"}}));
  dir.write("model/config.json", R"({"model_type": "test"})");
  dir.write("model/model.safetensors.index.json",
            !index_text.empty()
                ? index_text
                : std::string(R"({"metadata": {"total_size": 28, "note": "hi"}, "weight_map": )") + R"({"a": ")" +
                      k_shard1 + R"(", "b": ")" + k_shard1 + R"(", "c": ")" + k_shard2 + R"("}})");
  return folder;
}

std::vector<float> read_floats(Reader& r, std::size_t index) {
  std::vector<float> v(r.tensors()[index].count());
  r.read(index, 0, v.size(), v.data());
  return v;
}

std::string open_error(const std::string& path) {
  try {
    hf::FolderReader r(path);
  } catch (const Error& e) {
    return e.problems().at(0).what;
  }
  return {};
}

}  // namespace

TEST_CASE("a sharded folder reads shard by shard, with the index's metadata and every file it consists of") {
  TempDir dir;
  const std::string folder = write_folder(dir);
  CHECK(hf::looks_like_hf(folder));
  CHECK(hf::looks_like_hf(folder + "/model.safetensors.index.json"));
  CHECK(!hf::looks_like_hf(folder + "/config.json"));
  hf::FolderReader r(folder);
  REQUIRE(r.tensors().size() == 3);
  // Shard 1's tensors in its own (data) order, then shard 2's.
  CHECK(r.tensors()[0].name == "b");
  CHECK(r.tensors()[1].name == "a");
  CHECK(r.tensors()[1].shape == Shape{2, 2});
  CHECK(r.tensors()[2].name == "c");
  CHECK(read_floats(r, 0) == std::vector<float>{0.5f, 1.5f, 2.5f});
  CHECK(read_floats(r, 1) == std::vector<float>{1, 2, 3, 4});
  CHECK(read_floats(r, 2) == std::vector<float>{-1});
  float middle[2];
  r.read(1, 1, 2, middle);
  CHECK(middle[0] == 2);
  CHECK(middle[1] == 3);
  CHECK(r.metadata().at("note") == "hi");
  CHECK(r.metadata().at("format") == "pt");  // shard 1's
  const std::vector<std::string> files = r.files();
  REQUIRE(files.size() == 3);
  CHECK(files[0].ends_with("model.safetensors.index.json"));
  CHECK(files[1].ends_with(k_shard1));
  CHECK(files[2].ends_with(k_shard2));
  // Opened by its index, the same model.
  hf::FolderReader by_index(folder + "/model.safetensors.index.json");
  CHECK(by_index.tensors().size() == 3);
}

TEST_CASE("the index is distrusted: shards outside the folder, tensors not where it says, shards it leaves out") {
  const auto index = [](const std::string& map) { return R"({"metadata": {}, "weight_map": )" + map + "}"; };
  {
    TempDir dir;
    const std::string err = open_error(write_folder(dir, index(R"({"a": "../model-00001-of-00002.safetensors"})")));
    CHECK(!err.empty());
  }
  {
    TempDir dir;  // c is in shard 2, not shard 1
    const std::string err = open_error(write_folder(dir, index(std::string(R"({"a": ")") + k_shard1 + R"(", "b": ")" +
                                                               k_shard1 + R"(", "c": ")" + k_shard1 + R"("})")));
    CHECK(!err.empty());
  }
  {
    TempDir dir;  // shard 2 is in the folder and named like a shard, but the index leaves it out
    const std::string err = open_error(
        write_folder(dir, index(std::string(R"({"a": ")") + k_shard1 + R"(", "b": ")" + k_shard1 + R"("})")));
    CHECK(!err.empty());
  }
  {
    TempDir dir;
    CHECK(!open_error(write_folder(dir, R"({"weight_map": {"a": 1}})")).empty());
  }
}

TEST_CASE("the writer makes one model.safetensors without an index, and copies the template folder's other files") {
  // Into a new folder, through the AtomicDirectory every folder output is made in.
  TempDir dir;
  hf::FolderReader input(write_folder(dir));
  const std::string out_dir = dir / "out";
  OutputSpec spec;
  spec.tensors = input.tensors();
  spec.template_input = &input;
  spec.provenance = Provenance(std::map<std::string, std::string>{{"wavg_method", "test"}});
  {
    AtomicDirectory folder(out_dir, Overwrite::no, input.files());
    auto w = hf::create_hf_writer(folder.tmp_path(), out_dir, spec);
    const std::vector<float> b{7, 8, 9}, a{1, -1, 2, -2}, c{0.25f};
    w->write(0, 0, 3, b.data());
    w->write(1, 0, 4, a.data());
    w->write(2, 0, 1, c.data());
    w->finish();
    w.reset();
    folder.commit();
  }
  const std::string& tmp = out_dir;
  CHECK(!std::filesystem::exists(tmp + "/model.safetensors.index.json"));
  CHECK(test::read_all(tmp + "/config.json") == R"({"model_type": "test"})");
  const auto out = test::parse_safetensors(tmp + "/model.safetensors");
  CHECK(out.values.at("b") == std::vector<float>{7, 8, 9});
  CHECK(out.values.at("a") == std::vector<float>{1, -1, 2, -2});
  CHECK(out.shapes.at("a") == std::vector<std::uint64_t>{2, 2});
  CHECK(out.values.at("c") == std::vector<float>{0.25f});
  CHECK(out.metadata.at("format") == "pt");
  CHECK(out.metadata.at("wavg_method") == "test");
  // Weights and indexes are never copied from the template.
  for (const auto& e : std::filesystem::directory_iterator(tmp))
    CHECK(e.path().filename().string().find("-of-") == std::string::npos);
}
