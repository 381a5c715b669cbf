#pragma once
// merge's options, shared with check: check is the merge without its output (pipeline::verify), so it takes every
// option that changes what is merged from one declaration, add_merge_options().

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "cli/align_options.hpp"
#include "cli/common.hpp"
#include "cli/federated_options.hpp"
#include "cli/recipe.hpp"
#include "cli/sequence.hpp"
#include "cli/soup_options.hpp"
#include "wavg/plan.hpp"

namespace wavg::cli {

// Which subcommand the options are for: merge writes an output; check verifies the merge and writes nothing, so
// it takes none of the output's options (-o, --format, --force, --out-dtype, --hash, --tf-state, --shard-size,
// --eval, --tokenizer-source).
enum class MergeUse { merge, check };

struct MergeOptions {
  MergeUse use = MergeUse::merge;
  std::vector<std::string> inputs;
  std::string output;
  std::string weights;
  std::string format;
  std::optional<DType> out_dtype;
  Device device = Device::automatic;
  std::string eval;
  PlanOptions plan;
  bool force = false;
  HashAlgo hash = HashAlgo::xxh3_128;
  bool tf_state = false;
  std::uint64_t shard_size = 0;
  std::string block_type;  // --out-dtype q8_0 or q4_0 (a GGUF output)
  int threads = 0;
  Verbosity verbosity;
  FederatedCli fed;
  TaskCli task;
  SequenceCli seq;
  AlignCli align;
  enum class Companions { base, input1 } companions = Companions::base;  // --tokenizer-source
  std::string recipe_path;                                               // --recipe
  std::optional<Recipe> recipe;
  std::string chat_template;       // the recipe's chat_template, resolved (empty: the tokenizer's own)
  std::string lora;                // --lora: how adapter folders aggregate (empty: exact)
  bool lora_apply = false;         // --lora-apply: input 1 is a base, the others adapters folded into it
  std::uint64_t lora_extract = 0;  // --lora-extract RANK: input 1 a base, input 2 its fine-tune (0: none)
};

// Adds merge's options to `app`, those of the output only where `o.use` is MergeUse::merge.
void add_merge_options(CLI::App& app, MergeOptions& o);

// What check reports of a verified merge.
struct Verified {
  Plan plan;
  std::vector<std::string> decisions;  // the method's (Method::decisions)
};
// Validates `o` (o.use: check) into a job and runs it up to its output (pipeline::verify): every input, the base
// and the server state opened and checked against each other, the method made; nothing is written.
Verified verify_merge(MergeOptions& o);

}  // namespace wavg::cli
