// Per-tensor parameter values (mergekit's evaluate_setting and layer positions), by hand.

#include <doctest/doctest.h>

#include "wavg/tensor_values.hpp"

using namespace wavg;

TEST_CASE("a gradient is interpolated linearly between its anchors over t in [0, 1]") {
  const ParamSetting g{{"", {0, 0.5, 0.3, 0.7, 1}}};
  CHECK(*evaluate_setting(g, "x", 0.0) == 0.0);
  CHECK(*evaluate_setting(g, "x", 0.5) == 0.3);     // scaled 2: anchor 2 exactly
  CHECK(*evaluate_setting(g, "x", 1.0) == 1.0);     // the last anchor, i1 clamped
  CHECK(*evaluate_setting(g, "x", 0.125) == 0.25);  // scaled 0.5: half way from 0 to 0.5
  CHECK(*evaluate_setting({{"", {2}}}, "x", 0.7) == 2.0);
}

TEST_CASE("the first condition whose filter is part of the name gives the value; none matching gives nothing") {
  const ParamSetting s{{"self_attn", {0.1}}, {"mlp", {0.2}}, {"", {0.3}}};
  CHECK(*evaluate_setting(s, "model.layers.0.self_attn.q_proj.weight", 0) == 0.1);
  CHECK(*evaluate_setting(s, "model.layers.0.mlp.up_proj.weight", 0) == 0.2);
  CHECK(*evaluate_setting(s, "model.norm.weight", 0) == 0.3);
  CHECK_FALSE(evaluate_setting({{"mlp", {1}}}, "model.norm.weight", 0).has_value());
}

TEST_CASE("a model's own setting comes before the global one, which fills what it leaves") {
  TensorValues v;
  v.global["weight"] = {{"", {1}}};
  v.per_input = {{{"weight", {{"mlp", {0.5}}}}}, {}};
  CHECK(*v.get("weight", "a.mlp.b", 0, 0) == 0.5);
  CHECK(*v.get("weight", "a.attn.b", 0, 0) == 1.0);
  CHECK(*v.get("weight", "a.mlp.b", 0, 1) == 1.0);
  CHECK_FALSE(v.get("density", "a.mlp.b", 0, 0).has_value());
  CHECK(v.names("weight"));
  CHECK_FALSE(v.names("t"));
}

TEST_CASE("layer i of L sits at i / (L - 1); tensors outside the layers at 0") {
  const auto t = layer_positions({"model.embed_tokens.weight", "model.layers.0.mlp.w", "model.layers.2.mlp.w",
                                  "model.layers.1.self_attn.q", "model.norm.weight", "transformer.h.1.attn"});
  CHECK(t == std::vector<double>{0, 0, 1, 0.5, 0, 0.5});
  CHECK(layer_positions({"model.layers.0.w", "lm_head.weight"}) == std::vector<double>{1, 0});  // L = 1: t = 1
}

TEST_CASE("a sliced merge resolves a setting per output slice, its gradient over the slice's own layers") {
  TensorValues v;
  v.global["weight"] = {{"", {9}}};
  SliceValues first;  // output layers 0-2, input 0's source starting at its layer 4
  first.layers = 3;
  first.global["weight"] = {{"", {0, 1}}};
  first.per_input = {{{"weight", {{"layers.5.", {7}}}}}};
  first.first = {4};
  SliceValues second;  // output layer 3 alone: t = 1
  second.layers = 1;
  second.global["weight"] = {{"", {2, 3}}};
  v.slices = {first, second};
  // The slice's own gradient: layer 1 of 3 sits at 0.5 (not at 1/3 of the output's 4 layers).
  CHECK(*v.get("weight", "model.layers.1.mlp.w", 0.0) == 0.5);
  CHECK(*v.get("weight", "model.layers.2.mlp.w", 0.0) == 1.0);
  CHECK(*v.get("weight", "model.layers.3.mlp.w", 0.0) == 3.0);  // one layer: t = 1
  // A source's own filter sees its own name: output layer 1 is the source's layer 5.
  CHECK(*v.get("weight", "model.layers.1.mlp.w", 0.0, 0) == 7.0);
  CHECK(*v.get("weight", "model.layers.0.mlp.w", 0.0, 0) == 0.0);  // layer 4: the slice's setting
  // Outside the layers: the embeddings take the first slice's settings, the rest the last one's, at t = 0.
  CHECK(*v.get("weight", "model.embed_tokens.weight", 0.7) == 0.0);
  CHECK(*v.get("weight", "lm_head.weight", 0.7) == 2.0);
  CHECK_FALSE(v.get("lambda", "lm_head.weight", 0.7).has_value());
  second.global.clear();
  v.slices.back() = second;
  CHECK(*v.get("weight", "model.layers.3.mlp.w", 0.0) == 9.0);  // the recipe's, last
}

TEST_CASE("a layer tensor's name splits around its layer number; the others are before or after the layers") {
  const auto n = layer_name("model.layers.12.mlp.up_proj.weight");
  REQUIRE(n);
  CHECK(n->prefix == "model.layers.");
  CHECK(n->layer == 12);
  CHECK(n->suffix == ".mlp.up_proj.weight");
  CHECK(layer_name("transformer.h.3.attn.c_attn.weight")->prefix == "transformer.h.");
  CHECK_FALSE(layer_name("model.norm.weight"));
  CHECK(before_layers("model.embed_tokens.weight"));
  CHECK(before_layers("transformer.wte.weight"));
  CHECK_FALSE(before_layers("lm_head.weight"));
}
