#pragma once
// Method parameters that vary from tensor to tensor, as mergekit's recipes give them: a setting is a scalar or a
// gradient (anchors interpolated over the layers), optionally under a filter (a substring of the tensor's name:
// self_attn, mlp), set for one model (models[i].parameters) or for every model (parameters). A tensor's layer
// position t is mergekit's: idx / (L - 1) for the tensors of layer idx of L (1 when L is 1), 0 for the tensors
// outside the layers (embeddings, final norm, head).
//
// A sliced merge (mergekit's `slices:` whose slices merge several sources) resolves its settings per output slice,
// as mergekit's ConfigReader does: a source's own parameters in that slice, then the slice's `parameters`, then the
// recipe's; a gradient runs over the slice's own layers (t = idx / (n - 1) for layer idx of the slice's n, 1 when n
// is 1), and the tensors outside the layers take the first slice's settings (embeddings) or the last one's (final
// norm, head) at t = 0. A source's own filters are matched against the source's tensor name (its own layer
// number), the others against the output's, as mergekit does.

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

// The settings of one output slice of a sliced merge.
struct SliceValues {
  std::map<std::string, ParamSetting> global;                  // slices[i].parameters
  std::vector<std::map<std::string, ParamSetting>> per_input;  // slices[i].sources[j].parameters, by input index
  std::vector<int> first;  // by input index: the source's first layer (names its tensors for its filters)
  int layers = 0;          // the slice's layer count (every source's)
};

struct TensorValues {
  std::map<std::string, ParamSetting> global;                  // `parameters`
  std::vector<std::map<std::string, ParamSetting>> per_input;  // `models[i].parameters`, by input index
  // Parameters the method has no default for (mergekit's required ones: weight, slerp's t): a tensor that no
  // setting gives a value is refused, naming the tensor, as mergekit refuses it, never given a made-up value.
  std::set<std::string> required;
  std::string source;  // the recipe, for those messages
  std::vector<SliceValues> slices;  // a sliced merge's slices, in output order (empty: a merge of whole models)

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

// A tensor name split around its layer number: model.layers.3.mlp.up.weight is {"model.layers.", 3, ".mlp.up.weight"}.
struct LayerName {
  std::string prefix;
  long layer = 0;
  std::string suffix;
};
// Returns `name` split around its layer number: the number after the first `layers.`, `h.`, `blocks.` or `layer.`
// component (model.layers.3.mlp..., transformer.h.3.attn...) followed by another; nothing outside the layers.
std::optional<LayerName> layer_name(const std::string& name);
// Tells whether a tensor outside the layers comes before them (embeddings: a name with "embed", "wte" or "wpe"), as
// mergekit's pre-weights do; the others (final norm, head) come after.
bool before_layers(const std::string& name);

// Returns each name's layer position t (see the top of this file; the layer from layer_name()).
std::vector<double> layer_positions(const std::vector<std::string>& names);

}  // namespace wavg
