#pragma once
// Keras's layouts inside an HDF5 file, and what a model's architecture says about the order of its layers. The
// HDF5 reader asks this file which datasets are a Keras model's variables, in which order, and in which layer.
//
//   Keras 2 (tf.keras model.save / save_weights, and Keras 3's legacy .h5 writer):
//     [model_weights/]        attr layer_names = [L...]             the layers, in model order
//       L/                    attr weight_names = [W...]            the layer's variables, in creation order
//         W                   dataset ("L/kernel:0", "L/lstm_cell/kernel:0", "forward_lstm/...")
//     optimizer_weights/      attr weight_names = [O...]            datasets at O
//     root attr model_config  {"class_name": "Sequential", "config": {"layers": [{"class_name": "Dense",
//                             "config": {"name": "dense"}}, ...]}} (Keras 2.0/2.1: "config" is the list itself)
//   Keras 3 (.weights.h5 and a .keras archive's model.weights.h5; keras/src/saving/saving_lib.py, _save_state):
//     every saveable object is a group holding
//       vars/                 its own variables, datasets 0, 1, ... (attr name = the object's name, Keras 3.x)
//       ATTR/                 an object held in attribute ATTR (cell, forward_layer, query_dense, seed_generator)
//       ATTR/K/               each object of a list attribute (layers): K is its class in snake case, then
//                             K_1, K_2, ... for later objects of the same class, in the list's order
//     Sequential and Functional write layers/ first, then the other attributes sorted by name with private ones
//     (_x) last; the root is the model, its optimizer/ one such attribute. A layer that owns layers (LSTM's cell,
//     Bidirectional, MultiHeadAttention, a nested model) keeps their variables in attribute-named groups under
//     its own, to any depth.
//
// HDF5 lists links by name, so a Keras 3 file alone does not tell the model's layer order: dense before
// einsum_dense, whatever the model says. Names built from class names keep the order among layers of one class
// (dense, dense_1, dense_2); a .keras archive's config.json gives the rest.

#include <hdf5.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wavg/format.hpp"

namespace wavg::keras {

// A model's top-level layer as found in the file: its group and its variables' dataset paths, in Keras's order.
struct FoundLayer {
  std::string group;                  // "model_weights/dense" (Keras 2), "layers/dense_1" (Keras 3)
  std::string kind;                   // class in snake case, or empty when the file does not say
  std::vector<std::string> datasets;  // full paths
  std::vector<std::size_t> part;      // per dataset, which vars/ group (object) holds it: Keras 3 sub-objects
};

struct FoundModel {
  LayerOrder order = LayerOrder::model;
  std::vector<FoundLayer> layers;
  std::vector<std::string> other;  // variables outside the layers (optimizer, the model's own), in Keras's order
};

// Reads a Keras name list, joining the chunks (`layer_names0`, `layer_names1`, ...) Keras writes when one attribute
// would exceed HDF5's 64 KiB header limit. Returns nullopt when the attribute is absent.
std::optional<std::vector<std::string>> read_names(hid_t object, const std::string& name, const std::string& file);

// Walks a Keras 2 group with layer_names (the root or model_weights/, named by `prefix`). Throws Error when a
// listed layer or weight is missing.
FoundModel walk_keras2(hid_t group, const std::string& prefix, const std::string& file);
// Returns the datasets a Keras 2 group lists in weight_names (checked to exist), as full paths under `prefix`.
std::vector<std::string> listed_weights(hid_t group, const std::string& prefix, const std::vector<std::string>& names,
                                        const std::string& owner, const std::string& file);
// Walks a Keras 3 tree from its root.
FoundModel walk_keras3(hid_t root, const std::string& file);

// A layer of an architecture: its name and class, in model order.
struct ConfigLayer {
  std::string name;
  std::string kind;  // class in snake case
};
// Returns the top-level layers of a Keras model config (config.json, model_config), or nullopt when the JSON is
// not a model config wavg understands.
std::optional<std::vector<ConfigLayer>> config_layers(std::string_view json);

// Gives Keras 2 layers (named by layer_names) their classes from the model config.
void set_keras2_kinds(ModelLayers& layers, const std::string& prefix, const std::vector<ConfigLayer>& config);
// Puts Keras 3 layers (layers/K) into the config's model order, when every layer with variables is found there.
void order_keras3_layers(ModelLayers& layers, const std::vector<ConfigLayer>& config);

// Returns Keras's snake case of a class name (naming.to_snake_case): "EinsumDense" -> "einsum_dense", "LSTM" ->
// "lstm", "Conv2D" -> "conv2d".
std::string snake_case(std::string_view class_name);

}  // namespace wavg::keras
