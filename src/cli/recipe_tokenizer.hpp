#pragma once
// A recipe's tokenizer, as mergekit (tokenizer/build.py, tokenizer/embed.py) makes it: `tokenizer_source: base |
// union | MODEL`, or the `tokenizer:` block (source, tokens, pad_to_multiple_of). The output tokenizer is
//   base   base_model's (else the first model's), without the tokens at or past its config.json vocab_size;
//   MODEL  that model's, as it is;
//   union  the base's, then every token of the other models it lacks (a model's plain tokens, then its added ones,
//          in the recipe's model order and each model's id order, each given the next id; mergekit's order follows a
//          Python set and a Rust hash map, which vary from run to run, so only the tokens are comparable);
// and then each of `tokens:` keys it lacks, as a plain added token. Every model's embedding and LM-head rows are
// rebuilt to that tokenizer before the merge: a token's row is the model's own row for it (unless the token's
// setting says force), else a default row, mergekit's rule:
//   the token's own `tokens:` source: zero, a model's row for it, or {kind: model_token, model, token | token_id}
//     (that model's row for another token);
//   otherwise a token no model has is zero, one only one model has is that model's row, one the base has is the
//   base's row, and any other is the mean of the rows of the models that have it.
// pad_to_multiple_of adds rows up to the next multiple, each the mean of the model's rebuilt rows. The embedding
// tensors are the 2-D tensors mergekit's architectures mark is_embed (embed_tokens, lm_head, wte, ...). The output
// config.json's vocab_size is the rebuilt row count; the tokenizer's files are the source's, with tokenizer.json
// (and tokenizer_config.json's added_tokens_decoder) written anew when tokens were added or left out. Tokenizers are
// read from tokenizer.json (transformers' fast tokenizers). Default rows are computed in double and rounded once to
// the tensor's dtype (mergekit computes them in the recipe's dtype).

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wavg/format.hpp"

namespace wavg::cli {

// Where a token's default row comes from (mergekit's TokenEmbeddingConfig).
struct TokenSource {
  enum class Kind { model, zero, model_token } kind = Kind::model;
  std::string model;                // model, model_token
  std::optional<std::string> token;  // model_token: the other token, or its id
  std::optional<long> token_id;
  bool force = false;  // the default row even for the models that have the token
};

struct TokenizerRecipe {
  std::string source = "union";  // "base", "union", or a model's folder
  std::vector<std::pair<std::string, TokenSource>> tokens;  // in the recipe's order
  long pad_to_multiple_of = 0;
};

// The rebuilt tokenizer and every model's embeddings over it, for one merge.
class TokenizedModels {
 public:
  // `models`: every model of the merge (base first when there is one), opened; `base`: the base's folder or "".
  // Throws Error naming a tokenizer that cannot be read, or a token source that names no model of the merge.
  TokenizedModels(const TokenizerRecipe& recipe, const std::vector<std::pair<std::string, Reader*>>& models,
                  const std::string& base);
  ~TokenizedModels();
  // Returns model `path`'s tensors with its embeddings rebuilt (a view of its reader; this object outlives it).
  std::unique_ptr<Reader> model(const std::string& path) const;
  // Returns the folder whose tokenizer files the output copies, and the files written over them (tokenizer.json,
  // tokenizer_config.json) when tokens were added or left out.
  const std::string& donor() const { return m_donor; }
  std::vector<std::pair<std::string, std::string>> files() const;
  // Returns the output's row count (config.json's vocab_size).
  long rows() const { return m_rows; }

  struct Impl;  // the tokens, every model's rows and the default rows (recipe_tokenizer.cpp)

 private:
  std::unique_ptr<Impl> m_impl;
  std::string m_donor;
  long m_rows = 0;
};

// Returns `config` (a config.json's text) with vocab_size set to `rows`, when it has one.
std::string with_vocab_size(const std::string& config, long rows);

}  // namespace wavg::cli
