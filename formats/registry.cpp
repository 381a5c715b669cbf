// The format registry: one row per codec. Inputs are recognised by content (sniff), never by extension alone;
// outputs take their format from --format or the extension.

#include <algorithm>
#include <array>
#include <cerrno>
#include <filesystem>
#include <functional>
#include <new>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "caffe/caffe.hpp"
#include "dcp/dcp.hpp"
#include "deepspeed/deepspeed.hpp"
#include "flax/flax.hpp"
#include "gguf/gguf.hpp"
#include "hdf5/hdf5_reader.hpp"
#include "hdf5/hdf5_writer.hpp"
#include "hf/hf.hpp"
#include "json/json.hpp"
#include "keras/keras_archive.hpp"
#include "mxnet/mxnet.hpp"
#include "peft/peft.hpp"
#include "npz/npz.hpp"
#include "onnx/onnx.hpp"
#include "orbax/orbax.hpp"
#include "pytorch/pytorch.hpp"
#include "safetensors/safetensors.hpp"
#include "tensorflow/tensorflow.hpp"
#include "tfjs/tfjs.hpp"
#include "unknown_kind.hpp"
#include "wavg/error.hpp"
#include "wavg/format.hpp"
#include "wavg/format_facts.hpp"
#include "wavg/free_space.hpp"
#include "wavg/mapped_file.hpp"
#include "wavg/names.hpp"
#include "wavg/stdio_files.hpp"

namespace wavg {

namespace {

// A codec's opener: its reader, constructed from the path alone.
template <typename CodecReader>
std::unique_ptr<Reader> open_as(const std::string& path) {
  return std::make_unique<CodecReader>(path);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// TF.js and wavg JSON both claim .json: after a TF.js input 1 a .json output is TF.js (merging model.json files
// gives a model.json), otherwise wavg JSON (its extension, a later row).
bool claims_tfjs(const std::string& path, const Reader* input1) {
  return input1 && input1->format() == FormatId::tfjs && ends_with(path, ".json");
}
bool claims_tensorflow(const std::string& path, const Reader*) { return is_tensorflow_output_name(path); }

// A folder is committed under its name without the trailing '/'.
std::string folder_name(const std::string& path) {
  std::string dir = path;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

std::unique_ptr<Writer> create_json_values(const std::string& t, const std::string& d, const OutputSpec& s) {
  return create_json_writer(t, d, s, JsonEncoding::values);
}
std::unique_ptr<Writer> create_json_base64(const std::string& t, const std::string& d, const OutputSpec& s) {
  return create_json_writer(t, d, s, JsonEncoding::base64);
}

constexpr unsigned k_tf_state = static_cast<unsigned>(OutputOption::tf_state);
constexpr unsigned k_shard_size = static_cast<unsigned>(OutputOption::shard_size);

// The rows, in sniffing order. A table, one row a codec, its facts in the order Codec declares them.
// clang-format off
const std::array<Codec, 21> k_codecs{{
    {.id = FormatId::hdf5, .name = "hdf5", .display = "HDF5", .extensions = {".h5", ".hdf5", ".he5", ".keras_h5"},
     .holds_complex = true, .train_extension = ".h5", .sniff = looks_like_hdf5, .open = open_as<Hdf5Reader>, .create = create_hdf5_writer},
    {.id = FormatId::safetensors, .name = "safetensors", .display = "safetensors", .extensions = {".safetensors"},
     .in_place = true, .train_extension = ".safetensors", .sniff = looks_like_safetensors,
     .open = open_as<SafetensorsReader>, .create = create_safetensors_writer},
    // Before "keras": both are zip archives; torch.save's first entry is TOP/data.pkl. An output over a PyTorch
    // input 1 keeps its pickle's other entries (an epoch, an optimizer's step).
    {.id = FormatId::pytorch, .name = "pytorch", .display = "PyTorch", .extensions = {".pt", ".pth", ".bin"},
     .keeps_entries = true, .in_place = true, .holds_complex = true, .train_extension = ".pytorch",
     .sniff = pytorch::looks_like_pytorch,
     .open = open_as<pytorch::PytorchReader>, .create = pytorch::create_pytorch_writer},
    {.id = FormatId::keras, .name = "keras", .display = "Keras archive", .extensions = {".keras"},
     .train_extension = ".keras", .sniff = looks_like_keras, .open = open_as<KerasArchiveReader>,
     .create = create_keras_writer},
    // After "pytorch" and "keras", the other zip archives: every member of an .npz is a .npy file.
    {.id = FormatId::npz, .name = "npz", .display = "NumPy", .extensions = {".npz"}, .holds_complex = true,
     .no_metadata = "an .npz holds arrays only", .train_extension = ".npz",
     .sniff = looks_like_npz, .open = open_as<NpzReader>, .create = create_npz_writer},
    {.id = FormatId::mxnet, .name = "mxnet", .display = "MXNet", .extensions = {".params"},
     .no_metadata = "an MXNet .params file holds arrays only", .train_extension = ".mxnet",
     .sniff = looks_like_mxnet, .open = open_as<MxnetReader>,
     .create = create_mxnet_writer},
    // Before "caffe", whose protobuf sniff a msgpack map could pass; Flax checkpoints often have no extension. An
    // output over a Flax input 1 keeps its state dict's other values (a step counter).
    {.id = FormatId::flax, .name = "flax", .display = "Flax", .extensions = {".msgpack"}, .keeps_entries = true,
     .no_metadata = "a Flax msgpack holds its state tree only", .train_extension = ".flax",
     .sniff = looks_like_flax, .open = open_as<FlaxReader>, .create = create_flax_writer},
    {.id = FormatId::caffe, .name = "caffe", .display = "Caffe", .extensions = {".caffemodel"},
     .no_metadata = "a Caffe NetParameter has no place for it", .train_extension = ".caffe",
     .sniff = looks_like_caffe, .open = open_as<CaffeReader>,
     .create = create_caffe_writer},
    {.id = FormatId::onnx, .name = "onnx", .display = "ONNX", .extensions = {".onnx"}, .companions = true, .train_extension = ".onnx", .sniff = looks_like_onnx, .open = open_as<OnnxReader>, .create = create_onnx_writer},
    // Given by prefix (model.ckpt-1000) or by PREFIX.index, and committed as PREFIX.index with its data shard as
    // a companion; an output named *.ckpt-N is TensorFlow too. (A copy of standard input is never a prefix nor
    // named .index, so it is never sniffed as one.)
    {.id = FormatId::tensorflow, .name = "tensorflow", .display = "TensorFlow checkpoint",
     .extensions = {".ckpt", ".index"}, .claims = claims_tensorflow, .companions = true,
     .commit_name = tensorflow_index_path, .accepts = k_tf_state, .train_extension = ".tensorflow",
     .sniff = looks_like_tensorflow, .open = open_tensorflow, .create = create_tensorflow_writer},
    // A folder, or its *.safetensors.index.json / *.bin.index.json; before "tfjs" and "json", which claim .json.
    // An output is a folder when its path ends in '/' or names one (output_format), or with --format hf / hf-bin.
    {.id = FormatId::hf, .name = "hf", .display = "Hugging Face", .folder = true, .commit_name = folder_name,
     .accepts = k_shard_size, .in_place = true, .train_extension = ".hf", .sniff = hf::looks_like_hf,
     .folder_holds = "model.safetensors, pytorch_model.bin, their sharded indexes", .default_folder = true,
     .open = open_as<hf::FolderReader>, .create = hf::create_hf_writer},
    // The same folder with torch.save shards; chosen with --format only, and read by the "hf" row.
    {.id = FormatId::hf_bin, .name = "hf-bin", .display = "Hugging Face", .read_as = FormatId::hf, .folder = true,
     .commit_name = folder_name, .accepts = k_shard_size, .in_place = true, .train_extension = ".hf-bin",
     .create = hf::create_hf_bin_writer},
    // Before "json": both claim .json; a TF.js model.json is told by its weightsManifest member. Its weight files
    // are companions beside it.
    {.id = FormatId::tfjs, .name = "tfjs", .display = "TensorFlow.js", .claims = claims_tfjs, .companions = true,
     .not_from_stdin = "a TF.js model.json names weight files beside it, so it cannot come from standard input; "
                       "give its path",
     .train_extension = ".tfjs", .sniff = looks_like_tfjs, .open = open_as<TfjsReader>, .create = create_tfjs_writer},
    {.id = FormatId::json, .name = "json", .display = "wavg JSON", .extensions = {".json"},
     .train_extension = ".json", .sniff = looks_like_wavg_json, .open = open_as<JsonReader>,
     .create = create_json_values},
    // The same format with base64 data; chosen with --format only, and read by the "json" row.
    {.id = FormatId::json_base64, .name = "json-base64", .display = "wavg JSON", .read_as = FormatId::json,
     .train_extension = ".json-base64", .create = create_json_base64},
    // A PyTorch Distributed Checkpoint folder (.metadata); an output folder is one when input 1 is (output_format).
    // The copied .metadata keeps input 1's non-tensor values (keeps_entries) and its chunking (no --shard-size).
    {.id = FormatId::dcp, .name = "dcp", .display = "PyTorch DCP", .folder = true, .commit_name = folder_name,
     .keeps_entries = true, .in_place = true,
     .no_metadata = "wavg reads no metadata back from a DCP folder (its wavg.json is a record)",
     .train_extension = ".dcp", .sniff = dcp::looks_like_dcp,
     .folder_holds = "a DCP .metadata", .open = open_as<dcp::DcpReader>, .create = dcp::create_dcp_writer},
    // A DeepSpeed ZeRO checkpoint folder (global_stepN/, or the folder above with `latest`); an output folder is
    // one when input 1 is (output_format).
    {.id = FormatId::deepspeed, .name = "deepspeed", .display = "DeepSpeed", .folder = true,
     .commit_name = folder_name, .keeps_entries = true,
     .no_metadata = "wavg reads no metadata back from a DeepSpeed folder (its wavg.json is a record)",
     .train_extension = ".deepspeed",
     .sniff = deepspeed::looks_like_deepspeed,
     .folder_holds = "DeepSpeed's *_model_states.pt", .open = open_as<deepspeed::DeepspeedReader>,
     .create = deepspeed::create_deepspeed_writer},
    // A PEFT LoRA adapter folder (adapter_config.json and adapter_model.safetensors or .bin); an output folder is
    // one when input 1 is (output_format).
    {.id = FormatId::peft, .name = "peft", .display = "PEFT adapter", .folder = true, .commit_name = folder_name,
     .train_extension = ".peft", .sniff = peft::looks_like_peft,
     .folder_holds = "adapter_config.json with adapter_model.safetensors", .open = open_as<peft::AdapterReader>,
     .create = peft::create_peft_writer},
    // The same folder with adapter_model.bin (torch.save); chosen with --format only, and read by the "peft" row.
    {.id = FormatId::peft_bin, .name = "peft-bin", .display = "PEFT adapter", .read_as = FormatId::peft,
     .folder = true, .commit_name = folder_name, .train_extension = ".peft-bin",
     .create = peft::create_peft_bin_writer},
    {.id = FormatId::orbax, .name = "orbax", .display = "Orbax", .folder = true, .commit_name = folder_name, .keeps_entries = true, .train_extension = ".orbax", .sniff = orbax::looks_like_orbax, .folder_holds = "Orbax's _METADATA", .open = open_as<orbax::OrbaxReader>, .create = orbax::create_orbax_writer},
    {.id = FormatId::gguf, .name = "gguf", .display = "GGUF", .extensions = {".gguf"}, .block_types = {"q8_0", "q4_0"}, .train_extension = ".gguf", .sniff = gguf::looks_like_gguf, .open = open_as<gguf::GgufReader>, .create = gguf::create_gguf_writer},
}};
// clang-format on

// Refuses a tensor name holding U+0000: C APIs (HDF5's among them) would cut the name there, silently.
std::unique_ptr<Reader> check_names(std::unique_ptr<Reader> reader) {
  for (const TensorInfo& t : reader->tensors())
    if (t.name.find('\0') != std::string::npos)
      fail(reader->path(), "tensor " + t.name + ": its name holds a NUL character (U+0000)");
  return reader;
}

// Refuses the first bytes of standard input (its copy so far, at `head`) unless they may start a checkpoint: a
// codec's sniffer claims them, or they start a zip archive (.keras, torch.save), whose directory comes last.
void check_stdin_head(const std::string& head) {
  const SniffInput input(head);
  for (const Codec& c : k_codecs)
    if (c.sniff && c.sniff(input)) return;
  if (input.text(4) == "PK\x03\x04") return;
  fail(k_stdio_name, describe_unknown(head));
}

// Returns the rows that sniff an input, in the order they are asked: every row with a sniffer for a file; for a
// folder, the rows that read folders, the default folder format last (a folder another folder format claims, a
// DCP checkpoint beside a model.safetensors, is that format).
std::vector<std::reference_wrapper<const Codec>> sniffing_order(bool folder) {
  std::vector<std::reference_wrapper<const Codec>> rows;
  for (const Codec& c : k_codecs)
    if (c.sniff && (!folder || (c.folder_holds && !c.default_folder))) rows.push_back(c);
  for (const Codec& c : k_codecs)
    if (c.sniff && folder && c.folder_holds && c.default_folder) rows.push_back(c);
  return rows;
}

// Sniffs `input` with every row (only the folder rows for a folder) and opens it with the first that claims it.
std::unique_ptr<Reader> open_sniffed(const std::string& given, const SniffInput& input, bool from_stdin) {
  const std::string& path = input.path();
  for (const Codec& c : sniffing_order(input.folder())) {
    if (!c.sniff(input)) continue;
    // Its other files would be looked for beside the copy, in $TMPDIR, where they are not (or are someone else's).
    if (from_stdin && c.not_from_stdin) fail(given, c.not_from_stdin);
    try {
      return check_names(c.open(path));
    } catch (const std::exception& e) {  // a structure larger than this process may hold, named by its file
      if (!dynamic_cast<const std::bad_alloc*>(&e) && !dynamic_cast<const std::length_error*>(&e)) throw;
      fail(path, "out of memory while reading its structure (" + std::string(c.display) + ")");
    }
  }
  fail(path, input.folder() ? folder_without() : describe_unknown(path));
}

// Returns the --format name of the format `input` was read as, for messages ("hdf5"), or its own name.
std::string format_label(const Reader& input) {
  return input.format() == FormatId::none ? input.format_name() : std::string(codec(input.format()).name);
}

// .ckpt is PyTorch Lightning's extension and TensorFlow's (model.ckpt): the output follows input 1 (`input`;
// TensorFlow's when there is none, an output made from no file).
FormatId ckpt_format(const std::string& path, const Reader* input) {
  if (!input) return FormatId::tensorflow;
  if (input->format() == FormatId::pytorch || input->format() == FormatId::tensorflow) return input->format();
  fail_usage("-o " + path + ": .ckpt names a PyTorch Lightning or a TensorFlow checkpoint and input 1 is " +
             input->format_name() + "; use --format pytorch or --format tensorflow");
}

}  // namespace

std::span<const Codec> codecs() { return k_codecs; }

const Codec& codec(FormatId id) {
  for (const Codec& c : k_codecs)
    if (c.id == id) return c;
  WAVG_ASSERT(!"codec: no row for this format");
  return k_codecs.front();
}

const Codec* codec_of(const Reader& reader) {
  return reader.format() == FormatId::none ? nullptr : &codec(reader.format());
}

std::unique_ptr<Reader> open_reader(const std::string& given) {
  const bool from_stdin = given == k_stdio_name;
  const std::string& path = from_stdin ? stdin_copy(check_stdin_head) : given;
  // A folder is shown to the folder rows by its path alone.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return open_sniffed(given, SniffInput(path), from_stdin);
  // A TensorFlow checkpoint is named by a prefix that is no file itself: PREFIX.index is, and the prefix is
  // recognised by its name. Checked first all the same: a FIFO would block its open() for ever.
  if (is_tensorflow_prefix(path)) {
    require_regular_file(path + ".index");
    return open_sniffed(given, SniffInput(path, {}), from_stdin);
  }
  // Mapped once (refused first if it is no regular file: a FIFO would block for ever), and every sniffer looks at
  // the mapping.
  const MappedFile file(path);
  return open_sniffed(given, SniffInput(path, {file.data(), static_cast<std::size_t>(file.size())}), from_stdin);
}

namespace {

// "; did you mean 'x.safetensors'?" for an output named x.safetensor: its extension close to one a format claims.
std::string mistyped_extension(const std::string& path) {
  const std::size_t dot = path.rfind('.'), slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::vector<std::string> extensions;
  for (const Codec& c : k_codecs)
    for (const char* ext : c.extensions)
      if (ext && c.create) extensions.emplace_back(ext);
  const std::string best = closest(path.substr(dot), extensions);
  return best.empty() ? "" : "; did you mean '" + path.substr(0, dot) + best + "'?";
}

}  // namespace

std::string folder_without() {
  std::vector<const char*> holds;
  for (const Codec& c : k_codecs)
    if (c.folder_holds) holds.insert(c.default_folder ? holds.begin() : holds.end(), c.folder_holds);
  std::string text = "a folder without ";
  for (std::size_t i = 0; i < holds.size(); ++i)
    text += std::string(i == 0 ? "" : i + 1 == holds.size() ? " or " : ", ") + holds[i];
  return text;
}

FormatId output_format(const std::string& path, const std::string& forced, const Reader* template_input) {
  if (path == k_stdio_name) {
    if (forced.empty()) fail_usage("-o - (standard output) needs --format " + output_format_names());
    for (const Codec& c : k_codecs)
      if (forced == c.name && !c.streams())
        fail_usage("--format " + forced + " writes several files, so it cannot go to standard output (-o -)");
  }
  if (!forced.empty()) {
    for (const Codec& c : k_codecs)
      if (forced == c.name && c.create) return c.id;
    std::vector<std::string> names;
    for (const Codec& c : k_codecs)
      if (c.create) names.emplace_back(c.name);
    fail_usage("--format " + forced + ": unknown format; use one of " + output_format_names() +
               did_you_mean(forced, names));
  }
  std::error_code ec;
  if (ends_with(path, "/") || std::filesystem::is_directory(path, ec)) {
    // A folder in input 1's folder format (DCP after a DCP input), else the default folder row (Hugging Face).
    if (template_input && template_input->format() != FormatId::none) {
      const Codec& input1 = codec(template_input->format());
      if (input1.folder && input1.create) return input1.id;
    }
    for (const Codec& c : k_codecs)
      if (c.default_folder) return c.id;
  }
  if (ends_with(path, ".ckpt")) return ckpt_format(path, template_input);
  for (const Codec& c : k_codecs)
    if (c.claims && c.claims(path, template_input)) return c.id;
  for (const Codec& c : k_codecs)
    for (const char* ext : c.extensions)
      if (ext && ends_with(path, ext)) return c.id;
  // A name that says nothing (ckpt-5, export/variables/variables) takes input 1's format, where it can be written.
  if (names_no_format(path) && template_input) {
    const Codec* input1 = codec_of(*template_input);
    if (input1 && input1->create) return input1->id;
  }
  fail_usage("cannot tell the output format of '" + path + "'; use --format " + output_format_names() +
             mistyped_extension(path));
}

FormatId output_format(const std::string& path, const std::string& forced, const std::vector<Reader*>& inputs) {
  WAVG_ASSERT(!inputs.empty());
  if (forced.empty() && names_no_format(path))
    for (const Reader* r : inputs)
      if (r->format() != inputs.front()->format())
        fail_usage("-o " + path + " names no format and the inputs are in several (" + format_label(*inputs.front()) +
                   ", " + format_label(*r) + "); use --format " + output_format_names());
  return output_format(path, forced, inputs.front());
}

bool names_no_format(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  const std::string base = path.substr(slash == std::string::npos ? 0 : slash + 1);
  return !base.empty() && base != "-" && base.find('.') == std::string::npos;
}

bool format_from_inputs(const std::string& path, const std::string& forced) {
  return forced.empty() && path != k_stdio_name && (ends_with(path, ".ckpt") || names_no_format(path));
}

std::size_t template_input(FormatId format, const std::vector<Reader*>& inputs,
                           const std::vector<TensorInfo>& tensors) {
  WAVG_ASSERT(!inputs.empty());
  const FormatId read_as = codec(format).reader_format();
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k]->format() != read_as) continue;
    // The writer finds each output tensor in the template by name (the plan names them after input 1's).
    std::unordered_map<std::string_view, const TensorInfo*> by_name;
    for (const TensorInfo& t : inputs[k]->tensors()) by_name.emplace(t.name, &t);
    const bool fits = std::all_of(tensors.begin(), tensors.end(), [&](const TensorInfo& t) {
      const auto it = by_name.find(t.name);
      return it != by_name.end() && it->second->shape == t.shape;
    });
    if (fits) return k;
  }
  return 0;
}

std::string output_format_names() {
  std::string names;
  for (const Codec& c : k_codecs)
    if (c.create) {
      if (!names.empty()) names += '|';
      names += c.name;
    }
  return names;
}

std::string output_file(FormatId format, const std::string& path) {
  const Codec& c = codec(format);
  return c.commit_name ? c.commit_name(path) : path;
}

std::unique_ptr<Writer> create_writer(FormatId format, const std::string& tmp_path, const std::string& display_path,
                                      const OutputSpec& spec) {
  const Codec& c = codec(format);
  if (!c.holds_complex)
    for (const TensorInfo& t : spec.tensors)
      if (t.numbers == Numbers::complex) {
        std::string holding;
        for (const Codec& other : k_codecs)
          if (other.holds_complex && other.create) holding += std::string(holding.empty() ? "" : ", ") + other.name;
        fail(display_path, t.name + ": " + c.display + " cannot hold complex numbers (" + element_type_name(t) +
                               "); write " + holding);
      }
  try {
    return c.create(tmp_path, display_path, spec);
  } catch (const std::exception& e) {  // laying out an output of very many tensors, named by the output
    if (!dynamic_cast<const std::bad_alloc*>(&e) && !dynamic_cast<const std::length_error*>(&e)) throw;
    fail(display_path, "out of memory while laying out the output (" + std::string(c.display) + ", " +
                           std::to_string(spec.tensors.size()) + " tensors)");
  }
}

namespace {

// Formats whose output takes other bytes than its tensors' dtypes, and refuses what it cannot store, before any
// input is read (Codec::create would refuse it only after the read pass).
struct OutputSizer {
  FormatId format;
  std::uint64_t (*bytes)(const OutputSpec& spec, const std::string& display_path);
};
constexpr OutputSizer k_sizers[] = {{FormatId::gguf, gguf::output_bytes}};

// What a format's own library names an entry while it saves (orbax-checkpoint: atomicity.py's TMP_DIR_SUFFIX).
struct UnfinishedSave {
  FormatId format;
  const char* infix;
};
constexpr UnfinishedSave k_unfinished[] = {{FormatId::orbax, ".orbax-checkpoint-tmp"}};

// Names said with "an": a vowel sound (orbax, onnx), or read as letters from one (hdf5, hf, npz, mxnet).
constexpr FormatId k_an[] = {FormatId::hdf5, FormatId::hf, FormatId::hf_bin, FormatId::npz,
                             FormatId::mxnet, FormatId::onnx, FormatId::orbax};

}  // namespace

std::uint64_t output_bytes(FormatId format, const OutputSpec& spec, const std::string& display_path) {
  for (const OutputSizer& s : k_sizers)
    if (s.format == format) return s.bytes(spec, display_path);
  return least_output_bytes(spec.tensors);
}

const char* unfinished_save(const std::string& name) {
  for (const UnfinishedSave& u : k_unfinished)
    if (name.find(u.infix) != std::string::npos) return codec(u.format).display;
  return nullptr;
}

std::string a_format(FormatId format) {
  const bool an = std::find(std::begin(k_an), std::end(k_an), format) != std::end(k_an);
  return std::string(an ? "an " : "a ") + codec(format).name;
}

}  // namespace wavg
