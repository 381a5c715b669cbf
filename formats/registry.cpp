// The format registry: one row per codec. Inputs are recognised by content (sniff), never by extension alone;
// outputs take their format from --format or the extension.

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <filesystem>
#include <string_view>
#include <unordered_map>

#include "caffe/caffe.hpp"
#include "dcp/dcp.hpp"
#include "deepspeed/deepspeed.hpp"
#include "flax/flax.hpp"
#include "hdf5/hdf5_reader.hpp"
#include "hf/hf.hpp"
#include "hdf5/hdf5_writer.hpp"
#include "json/json.hpp"
#include "keras/keras_archive.hpp"
#include "mxnet/mxnet.hpp"
#include "npz/npz.hpp"
#include "pytorch/pytorch.hpp"
#include "safetensors/safetensors.hpp"
#include "tensorflow/tensorflow.hpp"
#include "tfjs/tfjs.hpp"
#include "unknown_kind.hpp"
#include "wavg/error.hpp"
#include "wavg/format.hpp"
#include "wavg/mapped_file.hpp"
#include "wavg/stdio_files.hpp"

namespace wavg {

namespace {

// A codec's opener: its reader, constructed from the path alone.
template <typename CodecReader>
std::unique_ptr<Reader> open_as(const std::string& path) {
  return std::make_unique<CodecReader>(path);
}

struct Codec {
  const char* name;
  const char* reader_name;  // its reader's format_name()
  std::array<const char*, 4> extensions;
  bool (*sniff)(const std::string& path);
  std::unique_ptr<Reader> (*open)(const std::string& path);
  std::unique_ptr<Writer> (*create)(const std::string& tmp, const std::string& display, const OutputSpec& spec);
};

const std::array<Codec, 16> k_codecs{{
    {"hdf5", "HDF5",
     {".h5", ".hdf5", ".he5", ".keras_h5"},
     looks_like_hdf5,
     open_as<Hdf5Reader>,
     create_hdf5_writer},
    {"safetensors", "safetensors",
     {".safetensors", nullptr, nullptr, nullptr},
     looks_like_safetensors,
     open_as<SafetensorsReader>,
     create_safetensors_writer},
    // Before "keras": both are zip archives; torch.save's first entry is TOP/data.pkl.
    {"pytorch", "PyTorch",
     {".pt", ".pth", ".bin", nullptr},
     pytorch::looks_like_pytorch,
     open_as<pytorch::PytorchReader>,
     pytorch::create_pytorch_writer},
    {"keras", "Keras archive",
     {".keras", nullptr, nullptr, nullptr},
     looks_like_keras,
     open_as<KerasArchiveReader>,
     create_keras_writer},
    // After "pytorch" and "keras", the other zip archives: every member of an .npz is a .npy file.
    {"npz", "NumPy",
     {".npz", nullptr, nullptr, nullptr},
     looks_like_npz,
     open_as<NpzReader>,
     create_npz_writer},
    {"mxnet", "MXNet",
     {".params", nullptr, nullptr, nullptr},
     looks_like_mxnet,
     open_as<MxnetReader>,
     create_mxnet_writer},
    // Before "caffe", whose protobuf sniff a msgpack map could pass; Flax checkpoints often have no extension.
    {"flax", "Flax",
     {".msgpack", nullptr, nullptr, nullptr},
     looks_like_flax,
     open_as<FlaxReader>,
     create_flax_writer},
    {"caffe", "Caffe",
     {".caffemodel", nullptr, nullptr, nullptr},
     looks_like_caffe,
     open_as<CaffeReader>,
     create_caffe_writer},
    // Given by prefix (model.ckpt-1000) or by PREFIX.index; an output named *.ckpt-N is TensorFlow too.
    {"tensorflow", "TensorFlow checkpoint",
     {".ckpt", ".index", nullptr, nullptr},
     looks_like_tensorflow,
     open_as<TensorflowReader>,
     create_tensorflow_writer},
    // A folder, or its *.safetensors.index.json / *.bin.index.json; before "tfjs" and "json", which claim .json.
    // An output is a folder when its path ends in '/' or names one (output_format), or with --format hf / hf-bin.
    {"hf", "Hugging Face",
     {nullptr, nullptr, nullptr, nullptr},
     hf::looks_like_hf,
     open_as<hf::FolderReader>,
     hf::create_hf_writer},
    // The same folder with torch.save shards; chosen with --format only, and read by the "hf" row.
    {"hf-bin", "Hugging Face",
     {nullptr, nullptr, nullptr, nullptr},
     [](const std::string&) { return false; },
     nullptr,
     hf::create_hf_bin_writer},
    // Before "json": both claim .json; a TF.js model.json is told by its weightsManifest member.
    {"tfjs", "TensorFlow.js",
     {nullptr, nullptr, nullptr, nullptr},
     looks_like_tfjs,
     open_as<TfjsReader>,
     create_tfjs_writer},
    {"json", "wavg JSON",
     {".json", nullptr, nullptr, nullptr},
     looks_like_wavg_json,
     open_as<JsonReader>,
     [](const std::string& t, const std::string& d, const OutputSpec& s) {
       return create_json_writer(t, d, s, JsonEncoding::values);
     }},
    // The same format with base64 data; chosen with --format only, and read by the "json" row.
    {"json-base64", "wavg JSON",
     {nullptr, nullptr, nullptr, nullptr},
     [](const std::string&) { return false; },
     nullptr,
     [](const std::string& t, const std::string& d, const OutputSpec& s) {
       return create_json_writer(t, d, s, JsonEncoding::base64);
     }},
    // A PyTorch Distributed Checkpoint folder (.metadata); an output folder is one when input 1 is (output_format).
    {"dcp", "PyTorch DCP",
     {nullptr, nullptr, nullptr, nullptr},
     dcp::looks_like_dcp,
     open_as<dcp::DcpReader>,
     dcp::create_dcp_writer},
    // A DeepSpeed ZeRO checkpoint folder (global_stepN/, or the folder above with `latest`); read only.
    {"deepspeed", "DeepSpeed",
     {nullptr, nullptr, nullptr, nullptr},
     deepspeed::looks_like_deepspeed,
     open_as<deepspeed::DeepspeedReader>,
     nullptr},
}};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Refuses a tensor name holding U+0000: C APIs (HDF5's among them) would cut the name there, silently.
std::unique_ptr<Reader> check_names(std::unique_ptr<Reader> reader) {
  for (const TensorInfo& t : reader->tensors())
    if (t.name.find('\0') != std::string::npos)
      fail(reader->path(), "tensor " + t.name + ": its name holds a NUL character (U+0000)");
  return reader;
}

}  // namespace

std::unique_ptr<Reader> open_reader(const std::string& given) {
  const bool from_stdin = given == k_stdio_name;
  const std::string& path = from_stdin ? stdin_copy() : given;
  // Before any sniffer opens it: a FIFO would block its open() for ever. A TensorFlow checkpoint is named by a
  // prefix that is no file itself: PREFIX.index is. A folder is a Hugging Face model or nothing.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    if (dcp::looks_like_dcp(path)) return check_names(std::make_unique<dcp::DcpReader>(path));
    if (deepspeed::looks_like_deepspeed(path)) return check_names(std::make_unique<deepspeed::DeepspeedReader>(path));
    if (!hf::looks_like_hf(path))
      fail(path, "a folder without model.safetensors, pytorch_model.bin, their sharded indexes, a DCP .metadata or "
                 "DeepSpeed's *_model_states.pt");
    return check_names(std::make_unique<hf::FolderReader>(path));
  }
  require_regular_file(is_tensorflow_prefix(path) ? path + ".index" : path);
  for (const Codec& c : k_codecs) {
    if (!c.sniff(path)) continue;
    // Its other files would be looked for beside the copy, in $TMPDIR, where they are not (or are someone else's).
    if (from_stdin && std::string(c.name) == "tfjs")
      fail(given, "a TF.js model.json names weight files beside it, so it cannot come from standard input; give "
                  "its path");
    return check_names(c.open(path));
  }
  fail(path, describe_unknown(path));
}

std::string output_format(const std::string& path, const std::string& forced, const Reader* template_input) {
  if (path == k_stdio_name) {
    if (forced.empty()) fail_usage("-o - (standard output) needs --format " + output_format_names());
    if (forced == "tfjs" || forced == "tensorflow" || writes_folder(forced))
      fail_usage("--format " + forced + " writes several files, so it cannot go to standard output (-o -)");
  }
  if (!forced.empty()) {
    for (const Codec& c : k_codecs)
      if (forced == c.name && c.create) return forced;
    fail_usage("--format " + forced + ": unknown format; use one of " + output_format_names());
  }
  std::error_code ec;
  if (ends_with(path, "/") || std::filesystem::is_directory(path, ec))
    return template_input && dynamic_cast<const dcp::DcpReader*>(template_input) ? "dcp" : "hf";
  if (template_input && dynamic_cast<const TfjsReader*>(template_input) && ends_with(path, ".json")) return "tfjs";
  if (is_tensorflow_output_name(path)) return "tensorflow";
  for (const Codec& c : k_codecs)
    for (const char* ext : c.extensions)
      if (ext && ends_with(path, ext)) return c.name;
  fail_usage("cannot tell the output format of '" + path + "'; use --format " + output_format_names());
}

std::size_t template_input(const std::string& format, const std::vector<Reader*>& inputs,
                           const std::vector<TensorInfo>& tensors) {
  const Codec* codec = nullptr;
  for (const Codec& c : k_codecs)
    if (format == c.name) codec = &c;
  WAVG_ASSERT(codec && !inputs.empty());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k]->format_name() != codec->reader_name) continue;
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

std::string output_file(const std::string& format, const std::string& path) {
  if (writes_folder(format)) {
    std::string dir = path;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    return dir;
  }
  return format == "tensorflow" ? tensorflow_index_path(path) : path;
}

bool writes_folder(const std::string& format) { return format == "hf" || format == "hf-bin" || format == "dcp"; }

std::unique_ptr<Writer> create_writer(const std::string& format, const std::string& tmp_path,
                                      const std::string& display_path, const OutputSpec& spec) {
  for (const Codec& c : k_codecs)
    if (format == c.name) return c.create(tmp_path, display_path, spec);
  WAVG_ASSERT(!"create_writer: unknown format");
  return nullptr;
}

}  // namespace wavg
