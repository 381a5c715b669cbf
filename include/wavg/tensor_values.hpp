#pragma once
// Method parameters that vary from tensor to tensor, as mergekit's recipes give them: a setting is a scalar or a
// gradient (anchors interpolated over the layers), optionally under a filter (a substring of the tensor's name:
// self_attn, mlp), set for one model (models[i].parameters) or for every model (parameters). A tensor's layer
// position t is mergekit's: idx / (L - 1) for the tensors of layer idx of L (1 when L is 1), 0 for the tensors
// outside the layers (embeddings, final norm, head).

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace wavg {

// One entry of a setting: the value (one number, or a gradient of several) for the tensors whose name contains
// `filter` (empty or "*": every tensor).
struct ParamCondition {
  std::string filter;
  std::vector<double> values;
};
// A setting: its conditions in order; the first that matches a tensor gives the value.
using ParamSetting = std::vector<ParamCondition>;

struct TensorValues {
  std::map<std::string, ParamSetting> global;                  // `parameters`
  std::vector<std::map<std::string, ParamSetting>> per_input;  // `models[i].parameters`, by input index
  // Parameters the method has no default for (mergekit's required ones: weight, slerp's t): a tensor that no
  // setting gives a value is refused, naming the tensor, as mergekit refuses it, never given a made-up value.
  std::set<std::string> required;
  std::string source;  // the recipe, for those messages

  // Returns parameter `name` for `tensor` at layer position t: input `input`'s own setting first, then the global
  // one; nothing when neither matches (a usage error when `name` is required).
  std::optional<double> get(const std::string& name, const std::string& tensor, double t,
                            std::optional<std::size_t> input = std::nullopt) const;
  // Tells whether any setting (global or one model's) names parameter `name`.
  bool names(const std::string& name) const;
};

// Returns a setting's value at layer position t (mergekit's evaluate_setting), or nothing when no condition
// matches `tensor`.
std::optional<double> evaluate_setting(const ParamSetting& setting, const std::string& tensor, double t);

// Returns each name's layer position t (see the top of this file). A layer is the number after a
// `layers.`, `h.`, `blocks.` or `layer.` component (model.layers.3.mlp..., transformer.h.3.attn...).
std::vector<double> layer_positions(const std::vector<std::string>& names);

}  // namespace wavg
