#pragma once
// The boundary between file formats and everything else. A codec opens a checkpoint as a Reader (a list of tensors
// it can read in blocks) and creates a Writer for an output. The registry picks the codec by content for inputs
// and by extension (or --format) for outputs. Nothing outside formats/ knows how a file is laid out.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "wavg/provenance.hpp"
#include "wavg/tensor.hpp"

namespace wavg {

// One layer of a model, as pairing by position (--match order) sees it.
struct LayerInfo {
  std::string name;  // where the layer lives in the file ("model_weights/dense_1", "layers/dense_1")
  std::string kind;  // its class in snake case ("dense", "einsum_dense"), or empty when the file does not say
  std::vector<std::size_t> tensors;  // its tensors, as indices into tensors(), in the layer's variable order
  // Whether its variables come from several sub-objects (a Bidirectional's two RNNs, MultiHeadAttention's four
  // projections): Keras 3 lists sub-objects by attribute name, Keras 2 in its own order, so such a layer pairs
  // by position only with a layer whose file orders them the same way (sub_objects equal).
  bool sub_objects = false;
};

// How much of the model's layer order a file tells.
enum class LayerOrder {
  model,     // the real order (Keras 2 layer_names, a .keras config.json)
  per_kind,  // only among layers of one class (a Keras 3 .weights.h5 alone: dense, dense_1, ..., lstm, lstm_1)
};

struct ModelLayers {
  LayerOrder order = LayerOrder::model;
  std::vector<LayerInfo> layers;  // empty when the file has no layer structure: its tensors pair one by one
};

class Reader {
 public:
  virtual ~Reader() = default;

  virtual const std::string& path() const = 0;
  // Lists every file this input consists of, path() first (a TF.js model.json and its shards, a TensorFlow
  // checkpoint's .index and data shards): what its provenance fingerprint covers and what no output may replace.
  // Most formats are one file: {path()}.
  virtual std::vector<std::string> files() const { return {path()}; }
  // Returns the format's name ("HDF5").
  virtual std::string format_name() const = 0;
  // Returns the layout detected inside the format ("Keras 2 model", "Keras 2 weights", "plain HDF5").
  virtual std::string layout() const = 0;
  // Lists the tensors in the file's own order.
  virtual const std::vector<TensorInfo>& tensors() const = 0;
  // Reads `count` elements of tensor `index` starting at flat (row-major) element `offset` into `dst`, in the
  // tensor's dtype and native byte order.
  virtual void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) = 0;
  // Returns a pointer to the same elements read() would copy, straight from a memory mapping of the file, or
  // nullptr when they are not stored plainly (compressed, converted, misaligned): the caller then uses read().
  // Saves one copy of every byte. The pointer stays valid until the reader is destroyed.
  virtual const void* view(std::size_t /*index*/, std::uint64_t /*offset*/, std::uint64_t /*count*/) {
    return nullptr;
  }
  // Says a range given by view() is no longer needed, so its pages can leave the process's resident memory.
  virtual void release(std::size_t /*index*/, std::uint64_t /*offset*/, std::uint64_t /*count*/) {}
  // Hints that this range is read next, so the kernel can fetch it from disk while the current block is computed.
  virtual void prefetch(std::size_t /*index*/, std::uint64_t /*offset*/, std::uint64_t /*count*/) {}
  // Returns the model's layers when the layout has them (Keras), else an empty list.
  virtual ModelLayers model_layers() const { return {}; }
  // Returns file-level metadata as text (HDF5 root attributes, safetensors __metadata__, ...).
  virtual std::map<std::string, std::string> metadata() const = 0;
  // Returns the model's architecture as a Keras model config (an HDF5 file's model_config attribute, a .keras
  // archive's config.json), or an empty string when the file holds none. Alignment infers its spec from it.
  virtual std::string model_config() const {
    const auto meta = metadata();
    const auto it = meta.find("model_config");
    return it == meta.end() ? std::string() : it->second;
  }
  // Lists what the file holds besides its tensors that the output keeps from input 1 without averaging (a
  // training checkpoint's epoch, as "epoch (int 7)"), for -v.
  virtual std::vector<std::string> kept_entries() const { return {}; }
};

// What an output must hold: its tensors, and input 1 as the template whose structure it keeps.
struct OutputSpec {
  std::vector<TensorInfo> tensors;
  Reader* template_input = nullptr;  // input 1; the writer copies what it can of its structure and metadata
  std::vector<std::string> dropped;  // tensors of the template left out of the output (--tensors intersection)
  // Provenance (wavg_version, wavg_command, wavg_method, wavg_inputs, ...): every writer records these entries in
  // the format's file-level metadata (HDF5 root attributes, safetensors __metadata__, ...). Its entries() wait for
  // the inputs' hashes: ask for them in finish(), not before (see provenance.hpp).
  Provenance provenance;
  // --tf-state: a TensorFlow output also writes the `checkpoint` state file naming it, beside it.
  bool write_tf_state = false;
  // --shard-size: the largest shard of a Hugging Face folder output, in bytes (0: the ecosystem's 5 GB).
  std::uint64_t shard_size = 0;
  // A folder output copies config.json, the tokenizer's files and the like from this input's folder (null: the
  // template's); merge names the base, as mergekit's tokenizer_source: base.
  const Reader* companions = nullptr;
  // A folder output also writes these files (name, content): merge --recipe's mergekit_config.yml.
  std::vector<std::pair<std::string, std::string>> extra_files{};
};

class Writer {
 public:
  virtual ~Writer() = default;
  // Tells whether the writer already holds input 1's values for `index` (so copying them again is no work).
  virtual bool holds_template_values(std::size_t index) const = 0;
  // Writes `count` elements of output tensor `index` from flat element `offset`, in the tensor's dtype.
  virtual void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) = 0;
  // Completes the file. After finish() the file is whole and may be renamed into place.
  virtual void finish() = 0;
};

// Opens an input, choosing the codec by the file's content. Throws Error (exit 1) naming the file.
std::unique_ptr<Reader> open_reader(const std::string& path);

// Returns the output format for `path`: `forced` if not empty, else from the extension. Two formats share .json:
// the output is TensorFlow.js when input 1 (`template_input`, when known) is, so that merging model.json files
// gives a model.json, and wavg JSON otherwise. A path ending in '/' or naming an existing folder is a Hugging Face
// folder ("hf").
std::string output_format(const std::string& path, const std::string& forced,
                          const Reader* template_input = nullptr);
// Returns the index of the input an output of `format` keeps the structure and metadata of (OutputSpec's
// template_input): the first input in that format that holds every one of the output's `tensors` by name and
// shape (a .keras output needs a .keras input's config.json, a TF.js one a model.json), else input 1.
std::size_t template_input(const std::string& format, const std::vector<Reader*>& inputs,
                           const std::vector<TensorInfo>& tensors);
// Returns the names --format accepts, as "hdf5|safetensors|...", for help and error messages.
std::string output_format_names();

// Returns the file an output of `format` named `path` is committed as (the AtomicFile's target): `path` itself, or
// PREFIX.index for a TensorFlow checkpoint named by its prefix (its data shard is a companion).
std::string output_file(const std::string& format, const std::string& path);

// Tells whether an output of `format` is a folder (a Hugging Face model), committed by an AtomicDirectory: its
// writer is handed the temporary directory instead of a file.
bool writes_folder(const std::string& format);

// Creates a writer of `format` at `tmp_path` (a temporary file beside the target, already created empty).
std::unique_ptr<Writer> create_writer(const std::string& format, const std::string& tmp_path,
                                      const std::string& display_path, const OutputSpec& spec);

}  // namespace wavg
