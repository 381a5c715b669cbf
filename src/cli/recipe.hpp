#pragma once
// merge --recipe: a mergekit YAML (models, base_model, merge_method, parameters, dtype, out_dtype,
// tokenizer_source) read into what merge's own options would say. Every key is checked before any model is
// opened: a key wavg does not know, or knows from mergekit but does not run (modules, tokenizer, methods such as
// sce, a chat_template naming one of mergekit's own template files), is refused by name. slices run with any
// method: a passthrough frankenmerge, or each slice's sources merged (recipe_slices.hpp); tokenizer_source and the
// tokenizer block rebuild the embeddings to the output tokenizer (recipe_tokenizer.hpp). The table of keys and flags is README's "Coming from mergekit".
// What a recipe may claim is capped, so that reading one costs what a real one does: at most k_max_recipe_bytes of
// YAML (mergekit's recipes are a few KiB) and k_max_gradient values in one gradient (mergekit interpolates a
// gradient's anchors over the layers: one per layer is the most that says anything). Over either: one line, exit 2.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/recipe_slices.hpp"
#include "cli/recipe_tokenizer.hpp"
#include "wavg/dtype.hpp"
#include "wavg/federated.hpp"
#include "wavg/task_methods.hpp"
#include "wavg/tensor_values.hpp"

namespace wavg::cli {

inline constexpr std::size_t k_max_recipe_bytes = 256 * 1024;
inline constexpr std::size_t k_max_gradient = 1024;

struct Recipe {
  std::string text;                 // the YAML as read: mergekit_config.yml and the provenance's wavg_recipe
  std::vector<std::string> inputs;  // the models besides the base, in order (slerp: the base first)
  std::string base;                 // --base (empty for linear and slerp)
  const MethodSpec* method = &method_row("task-arithmetic");  // merge_method's row
  bool linear = false;          // mergekit's linear: the weighted sum of the models themselves
  std::vector<double> weights;  // the models' scalar weights (gradients and filters are in `values`)
  ParamValues params;           // the plain scalars of the numeric parameters (density: mergekit's 1 when none)
  std::optional<bool> normalize;
  std::optional<DareRescale> rescale;
  std::shared_ptr<TensorValues> values;      // every setting, per tensor
  std::optional<DType> out_dtype;            // out_dtype, else dtype
  std::optional<TokenizerRecipe> tokenizer;  // tokenizer_source or tokenizer: mergekit's tokenizer merge
  std::string base_model;                    // base_model (slice 0's in a sliced merge), or ""
  std::vector<Slice> slices;                 // merge_method passthrough: the frankenmerge's slices (no models)
  SlicedSources sliced;                      // slices with another method (empty inputs: models were given)
  std::optional<std::string> chat_template;  // auto, or a Jinja text (recipe_chat.hpp)
  bool int8_mask = false;                    // a top-level int8_mask (mergekit's memory hint): accepted, no effect
};

// Reads and checks the recipe at `path`. Throws a usage error (exit 2) naming the file and the key at fault.
Recipe read_recipe(const std::string& path);

// Tells whether `path` names a YAML file (.yml, .yaml): one given as an input is a recipe meant for --recipe.
bool looks_like_recipe(const std::string& path);

}  // namespace wavg::cli
