// Keras 3 .keras archives (formats/keras/): an archive the test assembles itself (support/zip_bytes.hpp: stored zip
// entries; model.weights.h5 written through the HDF5 C API, support/h5raw.hpp) read with its values, config and
// metadata; the writer's archive opened with libzip and its weights read with the HDF5 C API; the spec of its
// Dense chain inferred from config.json.
#include <doctest/doctest.h>
#include <hdf5.h>
#include <zip.h>

#include <nlohmann/json.hpp>

#include "align/state_dict_spec.hpp"
#include "keras/keras_archive.hpp"
#include "support/h5raw.hpp"
#include "support/temp_dir.hpp"
#include "support/zip_bytes.hpp"
#include "wavg/align.hpp"
#include "wavg/error.hpp"

using namespace wavg;
using wavg::test::TempDir;

namespace {

// A Dense 3 -> 4 -> 2 chain, as Keras 3.15 writes config.json (trimmed to what a reader needs).
const std::string k_config = R"({"module": "keras", "class_name": "Sequential", "config": {"name": "s", "layers": [)"
                             R"({"class_name": "InputLayer", "config": {"name": "input_layer"}},)"
                             R"({"class_name": "Dense", "config": {"name": "dense", "units": 4}},)"
                             R"({"class_name": "Dense", "config": {"name": "dense_1", "units": 2}}]}})";
const std::string k_metadata = R"({"keras_version": "3.15.1", "date_saved": "2026-11-26@10:00:00"})";

// Kernel values: 0.5 * i for dense (3 x 4), -i for dense_1 (4 x 2); biases i + 100.
std::vector<float> ramp(std::size_t n, float scale, float shift = 0) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i) + shift;
  return v;
}

// Writes a .keras archive of the chain; returns its path.
std::string write_keras(const TempDir& dir) {
  const std::string h5 = dir / "model.weights.h5";
  test::write_floats(h5, "layers/dense/vars/0", {3, 4}, ramp(12, 0.5f), true);
  test::write_floats(h5, "layers/dense/vars/1", {4}, ramp(4, 1, 100), false);
  test::write_floats(h5, "layers/dense_1/vars/0", {4, 2}, ramp(8, -1), false);
  test::write_floats(h5, "layers/dense_1/vars/1", {2}, ramp(2, 1, 100), false);
  // Keras 3's root also holds an empty `vars` group (the model's own variables).
  const hid_t f = H5Fopen(h5.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  H5Gclose(H5Gcreate2(f, "vars", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Fclose(f);
  return dir.write("m.keras", test::zip_stored({{"metadata.json", k_metadata},
                                                {"config.json", k_config},
                                                {"model.weights.h5", test::read_all(h5)}}));
}

// Returns entry `name` of the zip archive at `path`, read with libzip.
std::string zip_entry(const std::string& path, const std::string& name) {
  int code = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY, &code);
  REQUIRE(z != nullptr);
  zip_stat_t st;
  REQUIRE(zip_stat(z, name.c_str(), 0, &st) == 0);
  std::string data(st.size, '\0');
  zip_file_t* f = zip_fopen(z, name.c_str(), 0);
  REQUIRE(f != nullptr);
  CHECK(zip_fread(f, data.data(), st.size) == static_cast<zip_int64_t>(st.size));
  zip_fclose(f);
  zip_discard(z);
  return data;
}

}  // namespace

TEST_CASE(".keras archive: its weights in config.json's layer order, its config and metadata") {
  TempDir dir;
  const std::string path = write_keras(dir);
  CHECK(looks_like_keras(path));
  KerasArchiveReader r(path);
  REQUIRE(r.tensors().size() == 4);
  CHECK(r.tensors()[0].name == "layers/dense/vars/0");
  CHECK(r.tensors()[0].shape == Shape{3, 4});
  CHECK(r.tensors()[3].name == "layers/dense_1/vars/1");
  std::vector<float> kernel(8);
  r.read(2, 0, 8, kernel.data());
  CHECK(kernel == ramp(8, -1));
  CHECK(r.model_config() == k_config);
  CHECK(r.metadata().at("keras_version") == "3.15.1");
  const ModelLayers layers = r.model_layers();
  CHECK(layers.order == LayerOrder::model);
  REQUIRE(layers.layers.size() == 2);
  CHECK(layers.layers[0].name == "layers/dense");
  CHECK(layers.layers[1].kind == "dense");
}

TEST_CASE(".keras writer: config.json byte for byte, metadata.json with the provenance, the new weights") {
  TempDir dir;
  KerasArchiveReader input(write_keras(dir));
  const std::string out = dir.write("out.keras.tmp", "");
  OutputSpec spec;
  spec.tensors = input.tensors();
  spec.template_input = &input;
  spec.provenance = Provenance(std::map<std::string, std::string>{{"wavg_method", "test"}});
  {
    auto w = create_keras_writer(out, dir / "out.keras", spec);
    for (std::size_t t = 0; t < spec.tensors.size(); ++t) {
      const std::vector<float> v = ramp(spec.tensors[t].count(), 0.25f, static_cast<float>(t));
      w->write(t, 0, v.size(), v.data());
    }
    w->finish();
  }
  CHECK(zip_entry(out, "config.json") == k_config);
  const auto meta = nlohmann::json::parse(zip_entry(out, "metadata.json"));
  CHECK(meta["keras_version"] == "3.15.1");
  CHECK(meta["wavg_method"] == "test");
  const std::string h5 = dir.write("back.weights.h5", zip_entry(out, "model.weights.h5"));
  const std::vector<double> kernel = test::read_doubles(h5, "layers/dense_1/vars/0");
  REQUIRE(kernel.size() == 8);
  for (std::size_t i = 0; i < 8; ++i) CHECK(kernel[i] == 0.25 * static_cast<double>(i) + 2);
  CHECK(test::read_doubles(h5, "layers/dense/vars/1") == std::vector<double>{1, 1.25, 1.5, 1.75});
}

TEST_CASE("the spec of a .keras Dense chain comes from config.json: the hidden layer's 4 units, nothing else") {
  TempDir dir;
  KerasArchiveReader r(write_keras(dir));
  const align::PermSpec spec = align::make_spec(r, {});
  REQUIRE(spec.group_sizes == std::vector<std::uint64_t>{4});
  REQUIRE(spec.tensors.size() == 4);
  CHECK(spec.tensors[0].axes.size() == 2);
  CHECK(spec.tensors[0].axes[0].group == -1);  // the model's input
  CHECK(spec.tensors[0].axes[1].group == 0);
  CHECK(spec.tensors[1].axes[0].group == 0);  // dense's bias
  CHECK(spec.tensors[2].axes[0].group == 0);  // dense_1's kernel, input axis
  CHECK(spec.tensors[2].axes[1].group == -1);
  CHECK(!spec.tensors[3].permuted());  // the model's output
}
