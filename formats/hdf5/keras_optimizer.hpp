#pragma once
// The roles of a Keras 3 optimizer's variables in a weights file (keras/src/optimizers/base_optimizer.py, saved by
// saving_lib.py's _save_state as every object's own `variables`, numbered):
//
//   optimizer/vars/N          the optimizer's variables in order: 0 the iteration count, 1 the learning rate
//                             unless it is a LearningRateSchedule, then the slots, the same number per trainable
//                             variable (Adam: a momentum and a velocity each), then Nadam's u_product where its list
//                             holds it (the running product of the momentum schedule, a function of the step)
//   optimizer/ATTR/vars/N     an optimizer the optimizer holds: LossScaleOptimizer's inner_optimizer (mixed
//                             precision). The wrapper's list starts with its own variables (iteration count, a
//                             learning rate it never uses, step_counter, dynamic_scale) and goes on with the inner
//                             optimizer's list, which ATTR/vars/ holds again: the difference of the counts is how
//                             many the wrapper owns. A LossScaleOptimizer's inner Nadam lists no u_product.
//
// Roles, by position in these lists: the iteration count, step_counter and dynamic_scale (a power of two that
// halves at an overflow and doubles after dynamic_growth_steps clean steps: the state of one run's history, like the
// count) and u_product are counters; a learning rate is a hyper-parameter; the slots are optimizer state; the
// wrapper's copy of the inner list takes the inner list's roles, so both copies come out alike. A wrapper holds no
// slots: its variables after the learning rate are its own scalars. Whether a plain optimizer's vars/1 is the rate
// or a schedule's first slot, and whether Nadam's u_product is listed, the file alone tells by counting only; a
// .keras archive's config.json (OptimizerConfig) settles both.

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "wavg/tensor.hpp"

namespace wavg::keras {

// What a .keras archive's compile_config says about its optimizer, one level of wrapping each.
struct OptimizerConfig {
  std::optional<bool> rate_variable;             // learning_rate a number (a variable) or a schedule (none)
  bool schedule_product = false;                 // Nadam: lists u_product after its slots, when it holds it
  std::shared_ptr<const OptimizerConfig> inner;  // a wrapper's inner_optimizer
};

// Returns what config.json's compile_config says about the optimizer, or nullopt when it names none.
std::optional<OptimizerConfig> optimizer_config(std::string_view config_json);

// Gives every optimizer/.../vars/N of a Keras 3 weights file its role, from the lists' structure and `config`
// when a .keras archive gives one.
void set_keras3_optimizer_roles(std::vector<TensorInfo>& tensors, const OptimizerConfig* config);

}  // namespace wavg::keras
