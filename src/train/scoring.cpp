#include "train/scoring.hpp"

#include "train/model_io.hpp"
#include "wavg/error.hpp"
#include "wavg/format.hpp"

namespace wavg::train {

Dataset load_test_split(const std::string& path, int label_col, double test_fraction) {
  Dataset all = load_csv(path, label_col), train, test;
  split_train_test(all, test_fraction, train, test);
  scale_features(train, test);
  if (test.rows() == 0) fail(path, "the test split is empty (raise --test-fraction)");
  return test;
}

Mlp load_mlp(const std::string& path, const Dataset& data) {
  std::vector<std::size_t> widths;
  {
    const auto reader = open_reader(path);
    std::map<std::string, Shape> shapes;
    for (const TensorInfo& t : reader->tensors()) shapes.emplace(t.name, t.shape);
    std::uint64_t in = data.features;
    for (std::size_t i = 0;; ++i) {
      const std::string name = (i == 0 ? "dense" : "dense_" + std::to_string(i)) + "/kernel";
      auto it = shapes.find(name);
      if (it == shapes.end()) break;
      if (it->second.size() != 2 || it->second[0] != in)
        throw Error(ExitCode::incompatible, path,
                    name + ": expected (" + std::to_string(in) + ", units), found " + shape_string(it->second));
      in = it->second[1];
      widths.push_back(static_cast<std::size_t>(in));
    }
    if (widths.empty())
      throw Error(ExitCode::incompatible, path, "no dense/kernel: not a checkpoint of wavg's built-in MLP");
    if (widths.back() != data.classes)
      throw Error(ExitCode::incompatible, path,
                  "the last layer has " + std::to_string(widths.back()) + " outputs, the data " +
                      std::to_string(data.classes) + " classes");
  }
  widths.pop_back();
  Mlp model(data.features, widths, data.classes);
  load_model(model, path);
  return model;
}

Mlp interpolate(const Mlp& a, const Mlp& b, double t) {
  Mlp out = a;
  for (std::size_t i = 0; i < out.layers.size(); ++i) {
    out.layers[i].kernel = (1 - t) * a.layers[i].kernel + t * b.layers[i].kernel;
    out.layers[i].bias = (1 - t) * a.layers[i].bias + t * b.layers[i].bias;
  }
  return out;
}

}  // namespace wavg::train
