// Keras layout knowledge (formats/hdf5/keras_layout.hpp): class names in Keras's snake case (the values are what
// keras.src.utils.naming.to_snake_case returns in Keras 3.15), model configs of both Keras generations, and the
// Keras 3 layer order restored from a config.
#include <doctest/doctest.h>

#include "hdf5/keras_layout.hpp"

using namespace wavg;

TEST_CASE("class names become Keras's snake case") {
  CHECK(keras::snake_case("Dense") == "dense");
  CHECK(keras::snake_case("EinsumDense") == "einsum_dense");
  CHECK(keras::snake_case("LSTM") == "lstm");
  CHECK(keras::snake_case("GRU") == "gru");
  CHECK(keras::snake_case("MultiHeadAttention") == "multi_head_attention");
  CHECK(keras::snake_case("Conv2D") == "conv2d");
  CHECK(keras::snake_case("QDense") == "q_dense");
  CHECK(keras::snake_case("BatchNormalization") == "batch_normalization");
}

TEST_CASE("model configs list their top-level layers with classes, in model order") {
  // Keras 3 config.json / tf.keras model_config.
  const auto k3 = keras::config_layers(R"({"class_name": "Sequential", "config": {"name": "s", "layers": [
      {"class_name": "InputLayer", "config": {"name": "input_layer"}},
      {"class_name": "EinsumDense", "config": {"name": "einsum_dense"}},
      {"module": "keras.layers", "class_name": "Dense", "config": {"name": "dense"}}]}})");
  REQUIRE(k3);
  REQUIRE(k3->size() == 3);
  CHECK((*k3)[1].name == "einsum_dense");
  CHECK((*k3)[1].kind == "einsum_dense");
  CHECK((*k3)[2].kind == "dense");
  // Keras 2.0/2.1: the Sequential config is the layer list itself.
  const auto k2 = keras::config_layers(R"({"class_name": "Sequential", "config": [
      {"class_name": "Dense", "config": {"name": "fc1"}}]})");
  REQUIRE(k2);
  CHECK((*k2)[0].name == "fc1");
  CHECK(!keras::config_layers("[1, 2]"));
  CHECK(!keras::config_layers(R"({"class_name": "Dense", "config": {"units": 3}})"));
  CHECK(!keras::config_layers("not json"));
}

TEST_CASE("a Keras 3 file's layers take the config's order, unless the config does not describe them") {
  ModelLayers layers{LayerOrder::per_kind,
                     {{"layers/dense", "dense", {0, 1}, false},
                      {"layers/dense_1", "dense", {2}, false},
                      {"layers/einsum_dense", "einsum_dense", {3}, false}}};
  ModelLayers same = layers;
  keras::order_keras3_layers(layers,
                             {{"input_layer", "input_layer"}, {"e", "einsum_dense"}, {"d", "dense"}, {"d2", "dense"}});
  CHECK(layers.order == LayerOrder::model);
  REQUIRE(layers.layers.size() == 3);
  CHECK(layers.layers[0].name == "layers/einsum_dense");
  CHECK(layers.layers[1].name == "layers/dense");
  CHECK(layers.layers[2].name == "layers/dense_1");
  keras::order_keras3_layers(same, {{"e", "einsum_dense"}, {"d", "dense"}});  // no second dense
  CHECK(same.order == LayerOrder::per_kind);
  CHECK(same.layers[0].name == "layers/dense");
}
