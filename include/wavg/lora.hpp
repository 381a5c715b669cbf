#pragma once
// LoRA adapters as the rest of wavg sees them: which tensors of an adapter are whose factors, and the rank and scale
// each adapted module has. A PEFT adapter's module W gets the update dW = s * B * A, with A (r x in) and B (out x r)
// and s = lora_alpha / r, or lora_alpha / sqrt(r) with rsLoRA (use_rslora); rank_pattern and alpha_pattern give
// single modules their own r and lora_alpha. DoRA (use_dora) adds a magnitude vector m (one value per output row)
// and uses W' = m * (W + dW) / ||W + dW|| with the norm taken over each output row.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace wavg {

inline constexpr std::size_t k_no_tensor = std::numeric_limits<std::size_t>::max();

// One adapted module: its factors as indices into the reader's tensors().
struct LoraModule {
  std::string name;        // the module's path as the adapter file names it, without ".lora_A.weight"
  std::uint64_t rank = 0;  // r: A's rows, B's columns
  double alpha = 0;        // lora_alpha for this module (alpha_pattern over the config's)
  double scale = 0;        // s: alpha / r, or alpha / sqrt(r) with rsLoRA
  std::size_t a = k_no_tensor, b = k_no_tensor;
  std::size_t magnitude = k_no_tensor;  // DoRA's lora_magnitude_vector, or k_no_tensor
};

// What an adapter's config says and which modules its file adapts.
struct LoraAdapter {
  std::uint64_t r = 0;  // the config's default rank
  double alpha = 0;     // the config's default lora_alpha
  bool rslora = false;
  bool dora = false;
  std::string base_model;                   // base_model_name_or_path, or empty
  std::vector<std::string> target_modules;  // a list, or one regular expression as its single element
  std::vector<std::string> modules_to_save;
  std::vector<LoraModule> modules;  // in the order of their A factors in the file
};

// Returns the scale s of a module of rank `rank` and `alpha`: alpha / rank, or alpha / sqrt(rank) with rsLoRA.
inline double lora_scale(double alpha, std::uint64_t rank, bool rslora) {
  const auto r = static_cast<double>(rank);
  return alpha / (rslora ? std::sqrt(r) : r);
}

}  // namespace wavg
