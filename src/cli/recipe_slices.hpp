#pragma once
// mergekit's slices: the output's layers are its slices' layers one after another, renumbered from 0. A slice
// lists its sources, each a model's layer range [first, last) of the slice's length; the sources' layers pair by
// position (the slice's k-th layer is every source's first + k). With merge_method passthrough each slice has one
// source, copied; with any other method the sources of a slice are merged layer by layer (their parameters per
// slice: tensor_values.hpp). The tensors outside the layers come from the first slice's sources when they come
// before the layers (embeddings: before_layers()) and from the last slice's otherwise (final norm, head), as
// mergekit's pre and post weights do. The output's config.json is that of base_model (else the first slice's first
// model) with num_hidden_layers set to the new count, as mergekit's is.
//
// Each input position (and the base) becomes one virtual model, a Reader whose tensors are its sources' under
// their new names, so the conductor (pipeline::run) and the methods see a merge of whole models.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "wavg/format.hpp"

namespace wavg::cli {

// One source: layers [first, last) of `model`.
struct Slice {
  std::string model;
  int first = 0, last = 0;
};

// A sliced merge's sources, by output slice.
struct SlicedSources {
  std::vector<Slice> base;                 // the base's source in each slice; empty: the method has no base
  std::vector<std::vector<Slice>> inputs;  // by input position (the merge's inputs), then by slice
  // Returns every model the sources name, once each, in order of first mention: what the merge opens.
  std::vector<std::string> models() const;
  // Returns the output's layer count.
  int layers() const;
};

// The virtual models of a sliced merge, over the opened source models (which must outlive it).
class SlicedInputs {
 public:
  // `opened`: the readers of sources.models(), in that order. Throws Error naming a model that lacks a layer.
  SlicedInputs(const SlicedSources& sources, const std::vector<Reader*>& opened);
  ~SlicedInputs();
  // Returns the merge's inputs, by position.
  std::vector<Reader*> inputs() const;
  // Hands over the base's virtual model (null without a base); once.
  std::unique_ptr<Reader> take_base();

 private:
  std::vector<std::unique_ptr<Reader>> m_inputs;
  std::unique_ptr<Reader> m_base;
};

// Returns `folder`'s config.json with num_hidden_layers set to `layers`, or "" when it has none. Throws Error when
// it has no num_hidden_layers to set.
std::string sliced_config(const std::string& folder, int layers);

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
