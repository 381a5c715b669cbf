#pragma once
// Which tensors of a transformer are embedding tables (torch.nn.Embedding, looked up by index) and which the output
// head (a Linear over the vocabulary), for what treats them apart: a recipe's tokenizer merge rebuilds the token
// rows of both, LoRA extraction writes an embedding's factors as PEFT's lora_embedding_A/B (PEFT decides by the
// module's class, which a checkpoint does not store). The model's config.json says it by shape; without one, the
// names of mergekit's architecture definitions (pre_weights with is_embed, post_weights) say it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wavg {

enum class EmbeddingKind {
  none,    // any other tensor
  tokens,  // the token embedding (model.embed_tokens.weight, transformer.wte.weight, ...)
  table,   // another embedding table: positions (wpe, position_embeddings), token types
  head,    // the output head over the vocabulary (lm_head.weight, embed_out.weight, ...), a Linear
};

// Returns what the known architectures make of a tensor named `name` (by its last parts: "...embed_tokens.weight").
EmbeddingKind embedding_kind(const std::string& name);

// What a Hugging Face config.json says of a model's embedding tables: their width and row counts.
struct EmbeddingShapes {
  std::uint64_t width = 0;          // hidden_size (n_embd, d_model, dim)
  std::vector<std::uint64_t> rows;  // vocab_size, max_position_embeddings (n_positions), type_vocab_size
};

// Returns the shapes `config_json` (a config.json's text) gives, or nothing when it gives no width and vocabulary.
std::optional<EmbeddingShapes> embedding_shapes(const std::string& config_json);

// Tells whether a 2-D tensor `name` of `rows` x `cols` is an embedding table (tokens or another, never the head):
// with `shapes`, one of their row counts by their width, outside the layers and not named as a head; without, by
// its name.
bool is_embedding_table(const std::string& name, std::uint64_t rows, std::uint64_t cols,
                        const std::optional<EmbeddingShapes>& shapes);

}  // namespace wavg
