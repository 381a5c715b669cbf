#pragma once
// A passthrough frankenmerge (mergekit's slices with layer_range, merge_method passthrough): the output's layers
// are the slices' layers one after another, renumbered from 0, each copied from its model; the tensors outside the
// layers come from the first slice's model when they come before the layers (embeddings: a name with "embed",
// "wte" or "wpe") and from the last slice's model otherwise (final norm, head), as mergekit's pre and post
// weights do. The output's config.json is the first slice's model's with num_hidden_layers set to the new count.

#include <optional>
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "wavg/format.hpp"

namespace wavg::cli {

// One slice: layers [first, last) of `model`.
struct Slice {
  std::string model;
  int first = 0, last = 0;
};

struct PassthroughJob {
  std::vector<Slice> slices;
  std::string output, format, recipe_text;
  std::optional<DType> out_dtype;
  Overwrite overwrite = Overwrite::no;
  HashAlgo hash = HashAlgo::xxh3_128;
  Verbosity verbosity;
};

// Runs the frankenmerge: every tensor is copied bit for bit (or rounded once to out_dtype). Throws Error naming
// the model when a slice's layers are missing.
int run_passthrough(const PassthroughJob& job);

}  // namespace wavg::cli
