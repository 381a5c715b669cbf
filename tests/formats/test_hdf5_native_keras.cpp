// wavg's native walk of HDF5's structure against the HDF5 library's walk (support/h5native_diff.hpp) on Keras's
// layouts (formats/hdf5/keras_layout.hpp), written here as Keras 2 and Keras 3 write them through h5py, and on
// every HDF5 file of ../shared/real-checkpoints.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "support/h5corpus.hpp"
#include "support/h5native_diff.hpp"
#include "support/h5raw.hpp"
#include "support/temp_dir.hpp"

using namespace wavg::test;

namespace {

using Shapes = std::vector<std::vector<hsize_t>>;

std::size_t elements(const std::vector<hsize_t>& shape) {
  std::size_t n = 1;
  for (hsize_t d : shape) n *= d;
  return n;
}

// Sets a Keras name list on group `group` (fixed-length strings, as Keras 2 writes numpy bytes, or h5py's
// variable-length ones); an empty list is an empty float64 array, as Keras 2 writes it for a layer without weights.
void names_attr(H5Writer& w, const std::string& group, const std::string& attr, const std::vector<std::string>& names,
                Strings kind = Strings::fixed) {
  H5Id g = h5_ok(H5Gopen2(w.file(), group.c_str(), H5P_DEFAULT), H5Gclose, "open " + group);
  if (names.empty())
    double_attr(g, attr, {0}, {});
  else
    string_attr(g, attr, names, kind);
}

// Writes Keras 2 layer `layer` under `prefix`: float32 weights `names` (NAME:0) of `shapes`, and weight_names.
void keras2_layer(H5Writer& w, const std::string& prefix, const std::string& layer,
                  const std::vector<std::string>& names, const Shapes& shapes, int seed,
                  Strings kind = Strings::fixed) {
  std::vector<std::string> listed;
  w.group(prefix + layer);
  for (std::size_t i = 0; i < names.size(); ++i) {
    listed.push_back(layer + "/" + names[i] + ":0");
    w.numbers<float>(prefix + layer + "/" + listed.back(), H5T_IEEE_F32LE, shapes[i],
                     floats(elements(shapes[i]), seed + static_cast<int>(i)));
  }
  names_attr(w, prefix + layer, "weight_names", listed, kind);
}

// Writes a Keras 3 object's variables: group `path`vars/ with float32 datasets 0, 1, ... of `shapes`.
void keras3_vars(H5Writer& w, const std::string& path, const Shapes& shapes, int seed) {
  w.group(path + "vars");
  for (std::size_t i = 0; i < shapes.size(); ++i)
    w.numbers<float>(path + "vars/" + std::to_string(i), H5T_IEEE_F32LE, shapes[i],
                     floats(elements(shapes[i]), seed + static_cast<int>(i)));
}

}  // namespace

TEST_CASE("native walk: a Keras 2 model file (model_weights, optimizer_weights, model_config)") {
  TempDir dir;
  H5Writer w(dir / "keras2_model.h5");
  string_attr(w.file(), "backend", {"tensorflow"}, Strings::variable, true);
  string_attr(w.file(), "keras_version", {"2.10.0"}, Strings::variable, true);
  string_attr(w.file(), "model_config",
              {R"({"class_name": "Sequential", "config": {"name": "sequential", "layers": [)"
               R"({"class_name": "InputLayer", "config": {"name": "input_1"}},)"
               R"({"class_name": "Dense", "config": {"name": "dense"}},)"
               R"({"class_name": "Dropout", "config": {"name": "dropout"}},)"
               R"({"class_name": "Dense", "config": {"name": "dense_1"}}]}})"},
              Strings::variable, true);
  const Shapes dense{{4, 3}, {3}}, dense_1{{3, 2}, {2}};
  keras2_layer(w, "model_weights/", "dense", {"kernel", "bias"}, dense, 1);
  keras2_layer(w, "model_weights/", "dropout", {}, {}, 0);
  keras2_layer(w, "model_weights/", "dense_1", {"kernel", "bias"}, dense_1, 3);
  // Not in layer_names: its weight is found by the coverage walk.
  keras2_layer(w, "model_weights/", "top_level_model_weights", {"extra"}, {{2}}, 5);
  names_attr(w, "model_weights", "layer_names", {"dense", "dropout", "dense_1"});
  names_attr(w, "model_weights", "backend", {"tensorflow"});
  std::vector<std::string> optimizer{"Adam/iter:0"};
  w.numbers<std::int64_t>("optimizer_weights/Adam/iter:0", H5T_STD_I64LE, {}, {30});
  int seed = 10;
  for (const std::string slot : {"m", "v"})
    for (const auto& [layer, shapes] : {std::pair{"dense", dense}, std::pair{"dense_1", dense_1}})
      for (std::size_t i = 0; i < 2; ++i) {
        optimizer.push_back(std::string("Adam/") + layer + (i == 0 ? "/kernel/" : "/bias/") + slot + ":0");
        w.numbers<float>("optimizer_weights/" + optimizer.back(), H5T_IEEE_F32LE, shapes[i],
                         floats(elements(shapes[i]), seed++));
      }
  names_attr(w, "optimizer_weights", "weight_names", optimizer);
  check_walks_agree(w.path(), Expect::native, &w.close());
}

TEST_CASE("native walk: Keras 2 weights with layer_names split in two and variable-length names") {
  TempDir dir;
  H5Writer w(dir / "keras2_weights.h5");
  keras2_layer(w, "", "dense", {"kernel", "bias"}, {{5, 4}, {4}}, 1, Strings::variable);
  keras2_layer(w, "", "batch_normalization", {"gamma", "beta", "moving_mean", "moving_variance"}, {{4}, {4}, {4}, {4}},
               3, Strings::variable);
  keras2_layer(w, "", "dense_1", {"kernel", "bias"}, {{4, 1}, {1}}, 7, Strings::variable);
  names_attr(w, "/", "layer_names0", {"dense", "batch_normalization"}, Strings::variable);
  names_attr(w, "/", "layer_names1", {"dense_1"}, Strings::variable);
  string_attr(w.file(), "keras_version", {"2.1.6"}, Strings::fixed);
  w.numbers<float>("stray/values", H5T_IEEE_F32LE, {3}, floats(3, 20));  // listed nowhere
  check_walks_agree(w.path(), Expect::native, &w.close());
}

TEST_CASE("native walk: a Keras 3 .weights.h5 (layers/NAME/vars/N, sub-objects, optimizer/vars)") {
  TempDir dir;
  H5Writer w(dir / "model.weights.h5");
  const Shapes dense{{4, 3}, {3}}, dense_1{{3, 2}, {2}}, cell{{2, 8}, {2, 8}, {8}};
  keras3_vars(w, "layers/dense/", dense, 1);
  keras3_vars(w, "layers/dense_1/", dense_1, 3);
  w.group("layers/dropout/vars");
  w.numbers<std::uint32_t>("layers/dropout/seed_generator/vars/0", H5T_STD_U32LE, {2}, {1337, 0});
  w.group("layers/lstm/vars");
  keras3_vars(w, "layers/lstm/cell/", cell, 5);
  {
    H5Id vars = h5_ok(H5Gopen2(w.file(), "layers/dense/vars", H5P_DEFAULT), H5Gclose, "open vars");
    string_attr(vars, "name", {"dense"}, Strings::variable, true);
  }
  w.group("vars");  // the model's own variables: none
  // iterations, learning rate, then a momentum and a velocity per trainable variable: 0, 1, 2, ..., 10, 11, ...
  // (HDF5 lists "10" before "2"; Keras's order is the numbers')
  w.numbers<std::int64_t>("optimizer/vars/0", H5T_STD_I64LE, {}, {12});
  w.numbers<float>("optimizer/vars/1", H5T_IEEE_F32LE, {}, {0.001f});
  int n = 2;
  for (const Shapes* shapes : {&dense, &dense_1, &cell})
    for (const auto& shape : *shapes)
      for (int slot = 0; slot < 2; ++slot, ++n)
        w.numbers<float>("optimizer/vars/" + std::to_string(n), H5T_IEEE_F32LE, shape, floats(elements(shape), n));
  check_walks_agree(w.path(), Expect::native, &w.close());
}

TEST_CASE("native walk: every HDF5 file of the shared real checkpoints reads as the library walk reads it") {
  const std::string shared = shared_dir();
  if (shared.empty()) {
    MESSAGE("skipped: ../shared/real-checkpoints is absent");
    return;
  }
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(shared + "/real-checkpoints")) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".h5" || ext == ".hdf5")) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::string summary;
  std::size_t native = 0;
  for (const std::string& f : files) {
    const WalkReport r = check_walks_agree(f, std::nullopt);
    native += r.walked_natively;
    summary += "\n  " + f.substr(shared.size() + 1) + ": " +
               (r.refused ? "refused (" + r.error + ")"
                          : std::string(r.walked_natively ? "native" : "library") + ", " + std::to_string(r.tensors) +
                                " tensors");
  }
  MESSAGE(native << " of " << files.size() << " real HDF5 files walked natively:" << summary);
  CHECK(native > 0);  // the fast path is taken on files real frameworks wrote (all 14 of them in November 2026)
}
