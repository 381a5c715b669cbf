// Embedding tables and output heads by a model's structure (include/wavg/embeddings.hpp).

#include <doctest/doctest.h>

#include "wavg/embeddings.hpp"

using namespace wavg;

TEST_CASE("the known architectures' names tell token embeddings, other tables and heads apart") {
  CHECK(embedding_kind("model.embed_tokens.weight") == EmbeddingKind::tokens);
  CHECK(embedding_kind("gpt_neox.embed_in.weight") == EmbeddingKind::tokens);
  CHECK(embedding_kind("transformer.wpe.weight") == EmbeddingKind::table);
  CHECK(embedding_kind("embed_out.weight") == EmbeddingKind::head);
  CHECK(embedding_kind("lm_head.weight") == EmbeddingKind::head);
  CHECK(embedding_kind("output.weight") == EmbeddingKind::head);
  // A layer's output projection is no head, nor is a name that only contains a known one.
  CHECK(embedding_kind("model.layers.0.attention.output.weight") == EmbeddingKind::none);
  CHECK(embedding_kind("model.my_embed_tokens.weight") == EmbeddingKind::none);
}

TEST_CASE("config.json gives the tables' width and row counts") {
  const auto s = embedding_shapes(R"({"vocab_size": 9, "n_embd": 4, "n_positions": 5, "type_vocab_size": 2})");
  REQUIRE(s);
  CHECK(s->width == 4);
  CHECK(s->rows == std::vector<std::uint64_t>{9, 5, 2});
  CHECK_FALSE(embedding_shapes(R"({"hidden_size": 4})"));
  CHECK_FALSE(embedding_shapes("not json"));
}

TEST_CASE("with a config, a table is its shape outside the layers and not the head") {
  const auto s = embedding_shapes(R"({"vocab_size": 9, "hidden_size": 4, "max_position_embeddings": 4})");
  CHECK(is_embedding_table("model.tok.weight", 9, 4, s));
  CHECK(is_embedding_table("model.pos.weight", 4, 4, s));
  CHECK_FALSE(is_embedding_table("lm_head.weight", 9, 4, s));
  CHECK_FALSE(is_embedding_table("model.layers.0.q_proj.weight", 4, 4, s));  // a position table's shape
  CHECK_FALSE(is_embedding_table("model.proj.weight", 4, 9, s));
  CHECK(is_embedding_table("model.embed_tokens.weight", 7, 3, std::nullopt));
  CHECK_FALSE(is_embedding_table("embed_out.weight", 9, 4, std::nullopt));
}
