// The registry (formats/registry.cpp): every row's facts agree with each other, output names map to the row that
// claims them, and each checkpoint in samples/ (samples/README.md says what each one is) is sniffed as its format
// by the first row that claims it, from one SniffInput, and opened as that format.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string_view>

#include "support/temp_dir.hpp"
#include "wavg/error.hpp"
#include "wavg/format.hpp"

using namespace wavg;

namespace {

std::string sample(const std::string& path) { return std::string(WAVG_SAMPLES_DIR) + "/" + path; }

// Returns the first row whose sniffer claims `path`, as open_reader asks them: a file every row in order; a folder
// only the rows that read folders, the default folder format last.
FormatId sniffed(const std::string& path) {
  const SniffInput input(path);
  for (const bool last : {false, true})
    for (const Codec& c : codecs()) {
      const bool asked = input.folder() ? c.folder_holds && c.default_folder == last : !last;
      if (c.sniff && asked && c.sniff(input)) return c.id;
    }
  return FormatId::none;
}

}  // namespace

TEST_CASE("every registry row's facts agree with each other") {
  std::set<FormatId> ids;
  std::set<std::string_view> names, extensions, train_extensions;
  int default_folders = 0;
  for (const Codec& c : codecs()) {
    CAPTURE(c.name);
    REQUIRE(c.name != nullptr);
    REQUIRE(c.display != nullptr);
    CHECK(c.id != FormatId::none);
    CHECK(ids.insert(c.id).second);
    CHECK(names.insert(c.name).second);
    CHECK(&codec(c.id) == &c);
    // A row reads its files itself or names the row that does, never both.
    CHECK((c.sniff != nullptr) == (c.open != nullptr));
    if (c.read_as != FormatId::none) {
      CHECK(!c.sniff);
      CHECK(static_cast<bool>(codec(c.read_as).sniff));
      CHECK(c.reader_format() == c.read_as);
    } else {
      CHECK(c.reader_format() == c.id);
    }
    // Every row reads or writes something.
    CHECK((c.sniff != nullptr || c.create != nullptr));
    for (const char* ext : c.extensions)
      if (ext) {
        CHECK(ext[0] == '.');
        CHECK(extensions.insert(ext).second);  // the first match wins, so a second claim would be dead
      }
    if (c.create) {
      REQUIRE(c.train_extension != nullptr);
      CHECK(train_extensions.insert(c.train_extension).second);
    }
    // A folder output is committed under the folder's name and never streams; nor do several files.
    if (c.folder) CHECK(static_cast<bool>(c.commit_name));
    CHECK(c.streams() == (!c.folder && !c.companions));
    // Only a folder shards, and only one laid out by wavg (DCP and DeepSpeed keep input 1's files).
    if (c.accepts_option(OutputOption::shard_size))
      CHECK((c.folder && c.id != FormatId::dcp && c.id != FormatId::deepspeed));
    CHECK(c.accepts_option(OutputOption::tf_state) == (c.id == FormatId::tensorflow));
    // What a folder input holds is said by the rows that read folders, whose outputs (when they write) are folders.
    if (c.folder_holds && c.create) CHECK(c.folder);
    if (c.folder && c.sniff) CHECK(c.folder_holds != nullptr);
    if (c.default_folder) {
      ++default_folders;
      CHECK(c.folder);
      CHECK(static_cast<bool>(c.create));
    }
  }
  CHECK(default_folders == 1);
  CHECK(output_format_names().find("hf-bin") != std::string::npos);
  CHECK(output_format_names().find("deepspeed") != std::string::npos);  // written in input 1's layout
}

TEST_CASE("an output's name maps to the row claiming its extension, and its commit name") {
  for (const Codec& c : codecs())
    for (const char* ext : c.extensions)
      if (ext && std::string_view(ext) != ".ckpt") CHECK(output_format(std::string("out") + ext, "") == c.id);
  CHECK(output_format("out/", "") == FormatId::hf);
  CHECK(output_format("out", "hf-bin") == FormatId::hf_bin);
  CHECK(output_file(FormatId::hf, "out//") == "out");
  CHECK(output_file(FormatId::tensorflow, "model.ckpt-5") == "model.ckpt-5.index");
  CHECK(output_file(FormatId::safetensors, "a.safetensors") == "a.safetensors");
  CHECK(names_no_format("run/ckpt-5"));
  CHECK(!names_no_format("run.d/model.h5"));
}

TEST_CASE("each sample is sniffed as its format by the first row that claims it, and opens as that format") {
  const std::vector<std::pair<std::string, FormatId>> samples = {
      {"mlp/node1.h5", FormatId::hdf5},  // Keras 2 model.save()
      {"dtypes/a.h5", FormatId::hdf5},
      {"keras3/einsum_a.h5", FormatId::hdf5},
      {"keras3/einsum_a.keras", FormatId::keras},
      {"roles/a.keras", FormatId::keras},
      {"jax/params_a.npz", FormatId::npz},
      {"jax/packed_a.npz", FormatId::npz},
      {"jax/train_a.msgpack", FormatId::flax},
      {"jax/chunked_a.msgpack", FormatId::flax},
      {"tensorflow/tf2_a/ckpt-1.index", FormatId::tensorflow},
      {"tensorflow/tf2_a/ckpt-1", FormatId::tensorflow},  // a prefix, no file of its own
      {"tensorflow/tf1_a/model.ckpt-3", FormatId::tensorflow},
      {"tensorflow/v1_a/model.ckpt", FormatId::tensorflow},  // TF1's V1 format, one LevelDB table
      {"tfjs/a/model.json", FormatId::tfjs},
      {"tfjs/q8/model.json", FormatId::tfjs},
      {"dcp/run/step-100", FormatId::dcp},
      {"deepspeed/run/global_step1000", FormatId::deepspeed},
      {"deepspeed/run", FormatId::deepspeed},  // the folder with `latest`
      {"deepspeed/run/global_step1000/mp_rank_00_model_states.pt", FormatId::pytorch},
      {"lora/client1", FormatId::peft},  // a PEFT adapter folder
      {"lora/client1/adapter_model.safetensors", FormatId::safetensors},
      {"onnx/a.onnx", FormatId::onnx},
      {"onnx/ext/model.onnx", FormatId::onnx},  // external data in weights.bin beside it
      // JSON that is neither wavg JSON nor a TF.js model; not checkpoints at all.
      {"tfjs/expected.json", FormatId::none},
      {"tensorflow/v1_values.json", FormatId::none},
      {"digits/digits.csv.gz", FormatId::none},
      {"README.md", FormatId::none},
  };
  for (const auto& [path, id] : samples) {
    CAPTURE(path);
    CHECK(sniffed(sample(path)) == id);
    if (id == FormatId::none) continue;
    CHECK(open_reader(sample(path))->format() == id);
  }
}

TEST_CASE("a folder holding a DCP checkpoint and a model.safetensors is DCP: the default folder format comes last") {
  test::TempDir dir;
  const std::string dcp = std::string(WAVG_SAMPLES_DIR) + "/dcp/run/step-100";
  std::filesystem::copy(dcp, dir.path(), std::filesystem::copy_options::recursive);
  dir.write("model.safetensors", "not read");
  CHECK(sniffed(dir.path()) == FormatId::dcp);
  CHECK(open_reader(dir.path())->format() == FormatId::dcp);
}

TEST_CASE("a folder no folder row claims is refused naming what a model folder holds") {
  test::TempDir dir;
  dir.write("config.json", "{}");
  try {
    open_reader(dir.path());
    FAIL("opened");
  } catch (const Error& e) {
    CHECK(e.problems().at(0).what ==
          "a folder without model.safetensors, pytorch_model.bin, their sharded indexes, a DCP .metadata, "
          "DeepSpeed's *_model_states.pt, adapter_config.json with adapter_model.safetensors or Orbax's _METADATA");
  }
}

TEST_CASE("a sniffer given a path maps the file itself, and sees no bytes of what is no regular file") {
  test::TempDir dir;
  const SniffInput file(dir.write("f", "abc"));
  CHECK(file.text() == "abc");
  CHECK(file.text(2) == "ab");
  CHECK(!file.folder());
  const SniffInput folder(dir.path());
  CHECK(folder.folder());
  CHECK(folder.bytes().empty());
  const SniffInput missing(dir / "missing");
  CHECK(missing.bytes().empty());
  CHECK(!missing.folder());
}
