#pragma once
// The boundary between file formats and everything else. A codec opens a checkpoint as a Reader (a list of tensors
// it can read in blocks) and creates a Writer for an output. The registry picks the codec by content for inputs
// and by extension (or --format) for outputs. Nothing outside formats/ knows how a file is laid out.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wavg/error.hpp"
#include "wavg/lora.hpp"
#include "wavg/provenance.hpp"
#include "wavg/tensor.hpp"

namespace wavg {

// Which codec a reader or an output is: one value per row of the registry (formats/registry.cpp), compared as a
// value. Nothing outside formats/ asks which format a file is by its display name; it asks the row (codec()).
// A new format adds one value here and one row there. `none` is a reader no codec made (a model in memory).
enum class FormatId : std::uint8_t {
  none,
  hdf5,
  safetensors,
  pytorch,
  keras,
  mxnet,
  caffe,
  tensorflow,
  hf,
  hf_bin,
  tfjs,
  json,
  json_base64,
  npz,
  flax,
  dcp,
  deepspeed,
  peft,
  peft_bin,
  onnx,
  orbax,
  gguf,
};

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
  // Returns the codec that read the file (FormatId::none for a reader no codec made).
  virtual FormatId format() const { return FormatId::none; }
  // Returns the format's name for people ("HDF5"): the row's display name for a codec's reader.
  virtual std::string format_name() const = 0;
  // Returns the layout detected inside the format ("Keras 2 model", "Keras 2 weights", "plain HDF5").
  virtual std::string layout() const = 0;
  // Lists the tensors in the file's own order.
  virtual const std::vector<TensorInfo>& tensors() const = 0;
  // Reads `count` elements of tensor `index` starting at flat (row-major) element `offset` into `dst`, in the
  // tensor's dtype and native byte order.
  virtual void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) = 0;
  // Returns a pointer to the same elements read() would copy, straight from a memory mapping of the file, or
  // nullptr when they are not stored plainly (compressed, converted, in pieces): the caller then uses read().
  // Saves one copy of every byte. The pointer may be at any byte address, aligned for the dtype or not (a DCP
  // chunk after an odd-length archive, a packed Caffe field): load elements through memcpy or an aligned(1) type.
  // It stays valid until the reader is destroyed.
  virtual const void* view(std::size_t /*index*/, std::uint64_t /*offset*/, std::uint64_t /*count*/) { return nullptr; }
  // Says a range given by view() is no longer needed, so its pages can leave the process's resident memory.
  virtual void release(std::size_t /*index*/, std::uint64_t /*offset*/, std::uint64_t /*count*/) {}
  // Hints that this range is read next, so the kernel can fetch it from disk while the current block is computed.
  virtual void prefetch(std::size_t /*index*/, std::uint64_t /*offset*/, std::uint64_t /*count*/) {}
  // Lists where tensor `index` is cut in the file: the flat element offsets, ascending, inside (0, count), at which
  // one stored piece of it ends and the next begins (a DCP tensor's row-wise shards, a DeepSpeed parameter's parts
  // in two ranks' flat partitions). The engine ends its blocks there, so view() can lend each block whole instead
  // of read() assembling it. Empty when the tensor is stored in one piece, or in too many to be worth it (a
  // column-wise shard, one piece per row).
  virtual std::vector<std::uint64_t> boundaries(std::size_t /*index*/) const { return {}; }
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
  // Returns the model's architecture as the file names it (a GGUF file's general.architecture: "llama"), or an
  // empty string when it names none. The plan refuses inputs that name different ones.
  virtual std::string architecture() const { return {}; }
  // Lists what the file holds besides its tensors that the output keeps from input 1 without averaging (a
  // training checkpoint's epoch, as "epoch (int 7)"), for -v.
  virtual std::vector<std::string> kept_entries() const { return {}; }
  // Returns the LoRA structure when the input is an adapter (a PEFT folder), else null.
  virtual const LoraAdapter* lora_adapter() const { return nullptr; }
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
  // File-level metadata the output starts from, under the template's own and the provenance (a Hugging Face
  // folder's safetensors shards: {"format": "pt"}, which transformers requires, and input 1's shard metadata).
  std::map<std::string, std::string> metadata{};
  // --out-dtype: whether it was given (a format with types of its own, GGUF, otherwise keeps input 1's type of each
  // tensor), and the block type it named ("q8_0"; empty for a dtype), one of the row's block_types.
  bool out_dtype_given = false;
  std::string block_type{};
  // A distributed merge's rank other than 0 (Codec::in_place): rank 0's writer made the output's files, and this
  // one only writes its share of the values into them (Writer::finish_part).
  bool part = false;
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
  // Completes this process's part of an output that the ranks of a distributed merge write together
  // (Codec::in_place): its values are on disk (synced), and the rest (a header, an index) is left to the one rank
  // that calls finish(). Returns what that rank needs to know of this part (the CRC-32s of the zip entries' spans
  // it wrote), for its join_part(); empty: nothing.
  virtual std::string finish_part() {
    WAVG_ASSERT(!"finish_part() of a writer whose format is not in_place");
    return {};
  }
  // Takes another rank's finish_part(), on the rank that then calls finish().
  virtual void join_part(const std::string& /*part*/) {}
};

class MappedFile;

// What a sniffer looks at: the input's path (a folder's, a TensorFlow prefix's) and the bytes of the file, which
// open_reader maps once and shows to every sniffer in turn, so that no sniffer opens the file again. A folder, a
// prefix (whose file is PREFIX.index), anything but a regular file, and an empty file have no bytes.
class SniffInput {
 public:
  // Shows `bytes`, the content of the file at `path`, which the caller keeps mapped while sniffers look.
  SniffInput(std::string path, std::span<const unsigned char> bytes);
  // Maps the file at `path` itself (no bytes when it is no regular file, never an error): for one sniffer called
  // alone (an output folder's check, tests). Implicit, so that a sniffer may be called with a path.
  SniffInput(const std::string& path);                             // NOLINT(google-explicit-constructor)
  SniffInput(const char* path) : SniffInput(std::string(path)) {}  // NOLINT(google-explicit-constructor)
  ~SniffInput();
  SniffInput(const SniffInput&) = delete;
  SniffInput& operator=(const SniffInput&) = delete;

  const std::string& path() const { return m_path; }
  std::span<const unsigned char> bytes() const { return m_bytes; }
  // Returns the first `max` bytes (all of them by default) as characters.
  std::string_view text(std::size_t max = std::string_view::npos) const {
    return {reinterpret_cast<const char*>(m_bytes.data()), std::min(max, m_bytes.size())};
  }
  // Tells whether the path names a folder.
  bool folder() const { return m_folder; }

 private:
  std::string m_path;
  std::unique_ptr<MappedFile> m_own;  // the mapping made by the path-only constructor
  std::span<const unsigned char> m_bytes;
  bool m_folder = false;
};

// What an output's writer takes besides the spec: which of the output options a format accepts (--tf-state,
// --shard-size), as bits of Codec::accepts.
enum class OutputOption : unsigned { tf_state = 1u << 0, shard_size = 1u << 1 };

// A codec's row in the registry: everything the rest of the program needs to know about a format, so that nothing
// outside formats/ asks "which format is this?" by name. Rows are listed in sniffing order in formats/registry.cpp
// and written with designated initializers, naming only what differs from these defaults.
struct Codec {
  FormatId id = FormatId::none;
  const char* name = nullptr;     // --format's value and what messages call an output: "hdf5"
  const char* display = nullptr;  // what inspect and convert call an input: "HDF5"
  // The format whose reader reads this format's files, when it is another row's: a --format-only variant
  // (hf-bin is read by hf, json-base64 by json). An output's template is an input of that format (template_input).
  FormatId read_as = FormatId::none;
  // Output names this format claims by their ending (the first match in row order wins).
  std::array<const char*, 4> extensions{};
  // Claims an output `path` before any extension is looked at, given input 1 (may be null): TF.js claims *.json
  // after a TF.js input, TensorFlow *.ckpt-N. Null: extensions only.
  bool (*claims)(const std::string& path, const Reader* input1) = nullptr;
  bool folder = false;      // the output is a folder, committed by an AtomicDirectory (a Hugging Face model)
  bool companions = false;  // the output is several files (a TF.js model.json and its shards, a TensorFlow .index
                            // and its data shard), so it cannot go to standard output
  // Why an input of this format cannot be a copy of standard input (its other files are named beside it), or null.
  const char* not_from_stdin = nullptr;
  // Returns the name an output named `path` is committed as (TensorFlow: PREFIX.index; a folder: without its
  // trailing '/'). Null: `path` itself.
  std::string (*commit_name)(const std::string& path) = nullptr;
  unsigned accepts = 0;        // the OutputOption bits an output of this format takes
  // The block-quantized types of the format's own that --out-dtype may name for its outputs (GGUF's "q8_0"): float
  // tensors are computed as float32 and the writer encodes them.
  std::array<const char*, 4> block_types{};
  bool keeps_entries = false;  // an output over an input of this format keeps its non-tensor entries (an epoch)
  // The writer lays the whole output out from the OutputSpec alone (every rank computes the same offsets) and writes
  // each value in place there: the ranks of a distributed merge write their shares into one file (or the files of
  // one folder), each through a writer of its own (OutputSpec::part, Writer::finish_part), rank 0's also writing
  // the headers and the rest (Writer::finish).
  bool in_place = false;
  bool holds_complex = false;  // an output may hold complex numbers (Numbers::complex); create_writer refuses others
  // Why a file of this format has no file-level metadata that wavg reads back (convert --set-meta, --weight-by),
  // or null when it has (HDF5 root attributes, safetensors __metadata__, ...: where writers put the provenance).
  const char* no_metadata = nullptr;
  const char* train_extension = nullptr;  // what local-sgd names its checkpoints in this format
  // Tells whether an input is this format, by its content (SniffInput: the bytes open_reader mapped once); null
  // for a --format-only row.
  bool (*sniff)(const SniffInput& input) = nullptr;
  // What a folder of this format holds, for the message refusing a folder no row claims; null when the format
  // is no folder an input may be. Only these rows' sniffers see a folder.
  const char* folder_holds = nullptr;
  // An output folder is this format unless input 1 is in another folder format (the first such row).
  bool default_folder = false;
  // Opens `path` (sniffed as this format) as a Reader; null for a --format-only row.
  std::unique_ptr<Reader> (*open)(const std::string& path) = nullptr;
  // Creates a writer at `tmp_path` (a temporary file, or folder when `folder`, beside the target).
  std::unique_ptr<Writer> (*create)(const std::string& tmp_path, const std::string& display_path,
                                    const OutputSpec& spec) = nullptr;

  // Tells whether an output of this format takes option `o`.
  bool accepts_option(OutputOption o) const { return (accepts & static_cast<unsigned>(o)) != 0; }
  // Tells whether an output of this format can be one stream (standard output, -o -).
  bool streams() const { return !folder && !companions; }
  // Returns the format whose reader reads this format's files.
  FormatId reader_format() const { return read_as == FormatId::none ? id : read_as; }
};

// Returns every row, in sniffing order.
std::span<const Codec> codecs();
// Returns the row of `id` (not FormatId::none).
const Codec& codec(FormatId id);
// Returns the row of a reader's format, or null for a reader no codec made.
const Codec* codec_of(const Reader& reader);
// Returns what refuses a folder no row claims: "a folder without " what a folder of each folder format holds, the
// default folder format's first.
std::string folder_without();

// Runs a codec's helper process when the command line asks for one (the HDF5 structure probe: this executable
// spawned with a hidden first argument) and returns its exit status; returns -1 for any other command line. Every
// executable that reads HDF5 files calls it first thing in main().
int run_codec_helper(int argc, char** argv);

// Opens an input, choosing the codec by the file's content. Throws Error (exit 1) naming the file.
std::unique_ptr<Reader> open_reader(const std::string& path);

// Returns the output format for `path`: `forced` (a --format name) if not empty, else from the extension. Two
// formats share .json: the output is TensorFlow.js when input 1 (`template_input`, when known) is, so that merging
// model.json files gives a model.json, and wavg JSON otherwise. A path ending in '/' or naming an existing folder
// is a Hugging Face folder ("hf"; a DCP folder after a DCP input 1). `-o -` needs --format and a format that
// streams. A name that says nothing (ckpt-5, export/variables/variables: no extension) takes input 1's format, and
// .ckpt (PyTorch Lightning's and TensorFlow's) follows input 1 when it is PyTorch or TensorFlow and is refused
// asking for --format otherwise (TensorFlow without an input). Usage error (exit 2) otherwise.
FormatId output_format(const std::string& path, const std::string& forced, const Reader* template_input = nullptr);
// Returns output_format() for the inputs of a job: an output whose name says nothing is refused when the inputs
// are in several formats.
FormatId output_format(const std::string& path, const std::string& forced, const std::vector<Reader*>& inputs);
// Tells whether an output's file name says nothing of its format: no extension, as TensorFlow names checkpoints
// (ckpt-5, export/variables/variables). Such an output takes its inputs' format.
bool names_no_format(const std::string& path);
// Tells whether output_format() takes the format from the inputs (a name that says nothing, or .ckpt), so that
// the output's checks wait for them.
bool format_from_inputs(const std::string& path, const std::string& forced);
// Returns the index of the input an output of `format` keeps the structure and metadata of (OutputSpec's
// template_input): the first input read as that format that holds every one of the output's `tensors` by name and
// shape (a .keras output needs a .keras input's config.json, a TF.js one a model.json), else input 1.
std::size_t template_input(FormatId format, const std::vector<Reader*>& inputs, const std::vector<TensorInfo>& tensors);
// Returns the names --format accepts, as "hdf5|safetensors|...", for help and error messages.
std::string output_format_names();

// Returns the file an output of `format` named `path` is committed as (the AtomicFile's target): `path` itself, the
// folder without its trailing '/', or PREFIX.index for a TensorFlow checkpoint named by its prefix (its data shard
// is a companion).
std::string output_file(FormatId format, const std::string& path);

// Creates a writer of `format` at `tmp_path` (a temporary file beside the target, already created empty; a
// temporary folder for a folder format). Refuses complex tensors, by name, for a format that cannot hold them.
std::unique_ptr<Writer> create_writer(FormatId format, const std::string& tmp_path, const std::string& display_path,
                                      const OutputSpec& spec);

}  // namespace wavg
