#pragma once
// Extracting a LoRA adapter from a fine-tuned model and its base (mergekit-extract-lora's job): each weight's
// difference cut to a chosen rank by truncated SVD (src/core/lora/lora_extract.cpp explains which tensors and how).
// The adapter is a Reader that computes each module's factors when they are first read, one module at a time.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "wavg/embeddings.hpp"
#include "wavg/lora_merge.hpp"

namespace wavg {

class LoraExtract : public LoraAggregate {
 public:
  // Returns the adapter_config.json the adapter is written with.
  virtual std::string config_text() const = 0;
};

// Checks `tuned` against `base` (every tensor of one in the other, same shape and dtype, listed in one Error,
// exit 3) and returns the rank-`rank` adapter of their difference; `shapes` (the model's config.json, when it has
// one) tells the embedding tables apart. Both readers must outlive the result.
std::unique_ptr<LoraExtract> extract_lora(Reader& base, Reader& tuned, std::uint64_t rank,
                                          const std::optional<EmbeddingShapes>& shapes);

}  // namespace wavg
