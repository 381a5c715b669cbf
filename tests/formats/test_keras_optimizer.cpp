// Roles of Keras 3 optimizer variables by their place in the lists (formats/hdf5/keras_optimizer.hpp). The lists
// are those Keras 3.15.1 writes (samples/keras3/make_nadam.py, make_mixed_precision.py print them): a Dense(2) on 3
// inputs, so two trainable variables, (3, 2) and (2,).
#include <doctest/doctest.h>

#include "hdf5/keras_optimizer.hpp"

using namespace wavg;

namespace {

TensorInfo var(std::string name, DType dtype, Shape shape = {}) { return {std::move(name), dtype, std::move(shape)}; }

// The model, then GROUP/vars/0..: the iteration count, the learning rate, Adam's or Nadam's four slots, `extra`.
std::vector<TensorInfo> with_list(std::vector<TensorInfo> t, const std::string& group, bool product = false) {
  t.push_back(var(group + "vars/0", DType::i64));
  t.push_back(var(group + "vars/1", DType::f32));
  for (int k = 0; k < 4; ++k) t.push_back(var(group + "vars/" + std::to_string(2 + k), DType::f32, {k < 2 ? 3u : 2u}));
  if (product) t.push_back(var(group + "vars/6", DType::f32));
  return t;
}

std::vector<TensorInfo> model() {
  return {var("layers/dense/vars/0", DType::f32, {3, 2}), var("layers/dense/vars/1", DType::f32, {2})};
}

// LossScaleOptimizer's list: its iteration count, its learning rate, step_counter, dynamic_scale, the inner's list.
std::vector<TensorInfo> loss_scaled() {
  auto t = model();
  t.push_back(var("optimizer/vars/0", DType::i64));
  t.push_back(var("optimizer/vars/1", DType::f32));
  t.push_back(var("optimizer/vars/2", DType::i64));
  t.push_back(var("optimizer/vars/3", DType::f32));
  auto inner = with_list({}, "optimizer/inner_optimizer/");
  for (std::size_t k = 0; k < inner.size(); ++k) t.push_back(var("optimizer/vars/" + std::to_string(4 + k),
                                                                  inner[k].dtype, inner[k].shape));
  for (auto& i : inner) t.push_back(i);
  return t;
}

Role role(const std::vector<TensorInfo>& t, const std::string& name) {
  for (const auto& x : t)
    if (x.name == name) return x.role;
  FAIL("no " << name);
  return Role::unknown;
}

}  // namespace

TEST_CASE("a LossScaleOptimizer's own variables are counters and its rate, both copies of the inner list alike") {
  auto t = loss_scaled();
  keras::set_keras3_optimizer_roles(t, nullptr);
  CHECK(role(t, "optimizer/vars/0") == Role::counter);
  CHECK(role(t, "optimizer/vars/1") == Role::hyper_parameter);
  CHECK(role(t, "optimizer/vars/2") == Role::counter);  // step_counter
  CHECK(role(t, "optimizer/vars/3") == Role::counter);  // dynamic_scale
  for (int k = 0; k < 6; ++k)
    CHECK(role(t, "optimizer/vars/" + std::to_string(4 + k)) ==
          role(t, "optimizer/inner_optimizer/vars/" + std::to_string(k)));
  CHECK(role(t, "optimizer/inner_optimizer/vars/0") == Role::counter);
  CHECK(role(t, "optimizer/inner_optimizer/vars/1") == Role::hyper_parameter);
  CHECK(role(t, "optimizer/inner_optimizer/vars/2") == Role::optimizer_state);
  CHECK(role(t, "optimizer/inner_optimizer/vars/5") == Role::optimizer_state);
  CHECK(role(t, "layers/dense/vars/0") == Role::unknown);  // not the optimizer's: left to the reader
}

TEST_CASE("Nadam's u_product is a counter only where its list holds it") {
  keras::OptimizerConfig nadam{true, true, nullptr};
  auto plain = with_list(model(), "optimizer/", true);
  keras::set_keras3_optimizer_roles(plain, &nadam);
  CHECK(role(plain, "optimizer/vars/6") == Role::counter);
  CHECK(role(plain, "optimizer/vars/5") == Role::optimizer_state);
  // A LossScaleOptimizer's inner Nadam lists no u_product: its last variable is a velocity, even a scalar one.
  auto wrapped = loss_scaled();
  wrapped[wrapped.size() - 1].shape = {};
  wrapped[wrapped.size() - 7].shape = {};  // the wrapper's copy of it
  keras::OptimizerConfig wrapper{std::nullopt, false, std::make_shared<const keras::OptimizerConfig>(nadam)};
  keras::set_keras3_optimizer_roles(wrapped, &wrapper);
  CHECK(role(wrapped, "optimizer/inner_optimizer/vars/5") == Role::optimizer_state);
  CHECK(role(wrapped, "optimizer/vars/9") == Role::optimizer_state);
}

TEST_CASE("a learning rate schedule leaves vars/1 a slot, as config.json says") {
  keras::OptimizerConfig schedule{false, false, nullptr};
  auto t = with_list(model(), "optimizer/");
  t[3].shape = {};  // vars/1 a scalar slot (of a scalar weight)
  keras::set_keras3_optimizer_roles(t, &schedule);
  CHECK(role(t, "optimizer/vars/1") == Role::optimizer_state);
  CHECK_FALSE(t[3].role_by_rule);
}

TEST_CASE("config.json gives the optimizer and its inner one") {
  const auto c = keras::optimizer_config(
      R"({"compile_config": {"optimizer": {"class_name": "LossScaleOptimizer", "config": {"inner_optimizer":
          {"class_name": "Nadam", "config": {"learning_rate": 0.01}}, "initial_scale": 32768.0}}}})");
  REQUIRE(c);
  CHECK_FALSE(c->rate_variable);
  CHECK_FALSE(c->schedule_product);
  REQUIRE(c->inner);
  CHECK(c->inner->rate_variable == true);
  CHECK(c->inner->schedule_product);
  CHECK_FALSE(keras::optimizer_config(R"({"config": {}})"));
}
