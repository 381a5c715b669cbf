// Embedding tables and output heads (embeddings.hpp).

#include "wavg/embeddings.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "wavg/tensor_values.hpp"

namespace wavg {

namespace {

struct KnownTensor {
  const char* suffix;  // the name's last parts, matched whole after a dot (or as the whole name)
  EmbeddingKind kind;
};

// mergekit's architecture definitions: the embeddings among pre_weights and the heads among post_weights.
constexpr KnownTensor k_known[] = {
    {"embed_tokens.weight", EmbeddingKind::tokens},    {"wte.weight", EmbeddingKind::tokens},
    {"word_embeddings.weight", EmbeddingKind::tokens}, {"embed_in.weight", EmbeddingKind::tokens},
    {"tok_embeddings.weight", EmbeddingKind::tokens},  {"shared.weight", EmbeddingKind::tokens},
    {"wpe.weight", EmbeddingKind::table},              {"position_embeddings.weight", EmbeddingKind::table},
    {"token_type_embeddings.weight", EmbeddingKind::table}, {"embed_positions.weight", EmbeddingKind::table},
    {"lm_head.weight", EmbeddingKind::head},           {"embed_out.weight", EmbeddingKind::head},
    {"output_layer.weight", EmbeddingKind::head},      {"vocab_projector.weight", EmbeddingKind::head},
    {"output.weight", EmbeddingKind::head},
};

bool ends_with_part(const std::string& name, const std::string& suffix) {
  if (name == suffix) return true;
  return name.size() > suffix.size() && name.ends_with(suffix) && name[name.size() - suffix.size() - 1] == '.';
}

// The first unsigned integer among `keys` in `config`, else 0.
std::uint64_t first_count(const nlohmann::json& config, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    const auto it = config.find(k);
    if (it != config.end() && it->is_number_unsigned()) return it->get<std::uint64_t>();
  }
  return 0;
}

}  // namespace

EmbeddingKind embedding_kind(const std::string& name) {
  for (const KnownTensor& k : k_known)
    if (ends_with_part(name, k.suffix)) {
      // "output.weight" names Llama's original head, but also the last part of many layers (attention.output),
      // so only the whole name counts for it.
      if (std::string(k.suffix) == "output.weight" && name != k.suffix) continue;
      return k.kind;
    }
  return EmbeddingKind::none;
}

std::optional<EmbeddingShapes> embedding_shapes(const std::string& config_json) {
  const nlohmann::json config = nlohmann::json::parse(config_json, nullptr, false);
  if (!config.is_object()) return std::nullopt;
  EmbeddingShapes s;
  s.width = first_count(config, {"hidden_size", "n_embd", "d_model", "dim"});
  const std::uint64_t vocab = first_count(config, {"vocab_size"});
  if (s.width == 0 || vocab == 0) return std::nullopt;
  s.rows.push_back(vocab);
  if (const std::uint64_t n = first_count(config, {"max_position_embeddings", "n_positions"})) s.rows.push_back(n);
  if (const std::uint64_t n = first_count(config, {"type_vocab_size"})) s.rows.push_back(n);
  return s;
}

bool is_embedding_table(const std::string& name, std::uint64_t rows, std::uint64_t cols,
                        const std::optional<EmbeddingShapes>& shapes) {
  const EmbeddingKind kind = embedding_kind(name);
  if (!shapes) return kind == EmbeddingKind::tokens || kind == EmbeddingKind::table;
  // Outside the layers: a layer's square projection can have the shape of a position table (Llama-2-7B's q_proj and
  // its 4096 positions are both 4096 x 4096).
  return kind != EmbeddingKind::head && !layer_name(name) && cols == shapes->width &&
         std::find(shapes->rows.begin(), shapes->rows.end(), rows) != shapes->rows.end();
}

}  // namespace wavg
