// Writing an Orbax OCDBT checkpoint (layout in orbax.hpp, the store's encoding in ocdbt.hpp): one data file laid out
// before any value is written (every array's one chunk, uncompressed, then the .zarray documents, then the B+tree's
// one leaf node naming them all), a single-file manifest, and input 1's JSON with the few fields that change.

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>

#include "file_writer.hpp"
#include "orbax/orbax.hpp"
#include "read_back.hpp"
#include "small_text.hpp"
#include "tensorflow/crc32c.hpp"
#include "wavg/atomic_directory.hpp"
#include "wavg/error.hpp"
#include "wavg/removal.hpp"

namespace wavg::orbax {

namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

constexpr const char* k_data_file = "data.ocdbt";
constexpr std::uint64_t k_max_entries = 1u << 20;  // one leaf node: tensorstore's kMaxNodeArity

void varint(std::string& out, std::uint64_t v) {
  do {
    out += static_cast<char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    v >>= 7;
  } while (v);
}
void le(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

// The envelope of ocdbt.hpp around an uncompressed body.
std::string envelope(std::uint32_t magic, const std::string& body) {
  std::string out;
  for (int i = 3; i >= 0; --i) out += static_cast<char>((magic >> (8 * i)) & 0xff);
  le(out, 4 + 8 + 1 + 1 + body.size() + 4, 8);
  varint(out, 0);  // version
  varint(out, 0);  // uncompressed
  out += body;
  le(out, crc32c::extend(0, out.data(), out.size()), 4);
  return out;
}

// A data file table of the one data file, its base path empty (its nodes' own tables are relative to the folder).
void data_file_table(std::string& out) {
  varint(out, 1);
  varint(out, std::string(k_data_file).size());
  varint(out, 0);
  out += k_data_file;
}

std::string zarr_dtype(DType t) {
  switch (t) {
    case DType::bf16: return "bfloat16";
    case DType::f16: return "<f2";
    case DType::f32: return "<f4";
    case DType::f64: return "<f8";
    case DType::i8: return "|i1";
    case DType::i16: return "<i2";
    case DType::i32: return "<i4";
    case DType::i64: return "<i8";
    case DType::u8: return "|u1";
    case DType::u16: return "<u2";
    case DType::u32: return "<u4";
    case DType::u64: return "<u8";
    case DType::boolean: return "|b1";
  }
  return "";
}

// One array as zarr v2: a single chunk the tensor's shape (zarr's chunk dimensions are at least 1), uncompressed.
std::string zarray(const TensorInfo& t) {
  ordered_json chunks = ordered_json::array(), shape = ordered_json::array();
  for (const auto d : t.shape) chunks.push_back(std::max<std::uint64_t>(d, 1)), shape.push_back(d);
  return ordered_json{{"chunks", chunks},         {"compressor", nullptr}, {"dimension_separator", "."},
                      {"dtype", zarr_dtype(t.dtype)}, {"fill_value", nullptr}, {"filters", nullptr},
                      {"order", "C"},             {"shape", shape},        {"zarr_format", 2}}
      .dump();
}

std::string chunk_name(const TensorInfo& t) {
  std::string key;
  for (std::size_t d = 0; d < t.shape.size(); ++d) key += d ? ".0" : "0";
  return key.empty() ? "0" : key;
}

// The tree for an input 1 that is no Orbax checkpoint: dicts keyed by the names' parts.
ordered_json fresh_metadata(const std::vector<TensorInfo>& tensors) {
  ordered_json tree = ordered_json::object();
  for (const TensorInfo& t : tensors) {
    ordered_json keys = ordered_json::array();
    std::string tuple = "(";
    for (std::size_t at = 0; at <= t.name.size();) {
      const std::size_t slash = std::min(t.name.find('/', at), t.name.size());
      const std::string key = t.name.substr(at, slash - at);
      keys.push_back({{"key", key}, {"key_type", 2}});
      tuple += at ? ", '" : "'";
      tuple += key;
      tuple += '\'';
      at = slash + 1;
    }
    tuple += keys.size() == 1 ? ",)" : ")";
    ordered_json shape = ordered_json::array();
    for (const auto d : t.shape) shape.push_back(d);
    tree[tuple] = {{"key_metadata", keys},
                   {"value_metadata", {{"value_type", "jax.Array"}, {"skip_deserialize", false}, {"write_shape", shape}}}};
  }
  return {{"tree_metadata", tree}, {"custom_metadata", nullptr}};
}

ordered_json read_json(const std::string& path) {
  const ordered_json j = ordered_json::parse(read_small_text(path, 256u << 20, "metadata"), nullptr, false);
  if (j.is_discarded() || !j.is_object()) fail(path, "is not a JSON object");
  return j;
}

std::string param_name(const std::string& tensor) {
  std::string p = tensor;
  std::replace(p.begin(), p.end(), '/', '.');
  return p;
}

// Refuses (exit 2) a CheckpointManager step folder as the output (its item in a subfolder, STEP/default/_METADATA):
// the new checkpoint would lie beside that item, which is what orbax restores from the step, so the step would
// still restore the old model while wavg read the new one. The item's own folder is the output to give.
void check_not_manager_step(const std::string& display) {
  std::error_code ec;
  const fs::path target(display);
  if (!fs::is_directory(fs::symlink_status(target, ec)) || fs::exists(target / "_METADATA", ec)) return;
  std::vector<std::string> items;
  for (const auto& e : fs::directory_iterator(target, ec))
    if (e.is_directory(ec) && fs::is_regular_file(e.path() / "_METADATA", ec)) items.push_back(e.path().filename());
  std::sort(items.begin(), items.end());
  if (!items.empty())
    throw Error(ExitCode::usage, display,
                "is a CheckpointManager step whose checkpoint lies in " + items.front() +
                    "/; give that item's folder as the output (-o " + (target / items.front()).string() +
                    "), so that the step restores the new model");
}

// Records the files of `sub` (a folder of the Orbax checkpoint being replaced, relative to it) that `pattern` names
// for removal after the switch, as removal.hpp allows (the writer is only made over an existing folder with
// --force). A folder that is a link is not followed: its files are not the checkpoint's.
void retire_in(const std::string& tmp_dir, const fs::path& target, const std::string& sub, const std::regex& pattern) {
  std::error_code ec;
  for (fs::path at = sub; !at.empty(); at = at.parent_path())
    if (!fs::is_directory(fs::symlink_status(target / at, ec))) return;
  const OwnFiles own{(target / sub).string(), "file of the Orbax checkpoint being replaced",
                     [&](const std::string& name) { return std::regex_match(name, pattern); }, {}};
  for (const std::string& name : removable_files(own, files_named_like(own), Overwrite::yes))
    retire_in_folder(tmp_dir, sub + "/" + name);
}

// Over an existing Orbax checkpoint (--force): its OCDBT store's files go once the new manifest is in place, since
// the new store names only data.ocdbt: the data files (tensorstore names them d/ and 32 hex digits), the processes'
// stores (ocdbt.process_N/, their manifests and data files), numbered manifests, and array_metadatas/process_N,
// which describe the old arrays. Only those names, only in those folders; the rest of the folder stays.
void retire_old_store(const std::string& tmp_dir, const std::string& display) {
  const fs::path target(display);
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(target / "_METADATA", ec))) return;
  static const std::regex k_data(R"([0-9a-f]{32})"), k_manifest(R"(manifest\.ocdbt|manifest\.[0-9a-f]{16})"),
      k_numbered(R"(manifest\.[0-9a-f]{16})"), k_process(R"(process_[0-9]+)"), k_store(R"(ocdbt\.process_[0-9]+)");
  retire_in(tmp_dir, target, "d", k_data);
  retire_in(tmp_dir, target, "array_metadatas", k_process);
  const OwnFiles root{display, "numbered OCDBT manifest",
                      [](const std::string& name) { return std::regex_match(name, k_numbered); }, {}};
  for (const std::string& name : removable_files(root, files_named_like(root), Overwrite::yes))
    retire_in_folder(tmp_dir, name);
  std::vector<std::string> stores;
  for (const auto& e : fs::directory_iterator(target, ec)) {
    const std::string name = e.path().filename().string();
    if (std::regex_match(name, k_store)) stores.push_back(name);
  }
  std::sort(stores.begin(), stores.end());
  for (const std::string& store : stores) {
    retire_in(tmp_dir, target, store + "/d", k_data);
    retire_in(tmp_dir, target, store, k_manifest);
  }
}

class OrbaxWriter final : public FileWriter {
 public:
  OrbaxWriter(const std::string& tmp_dir, const std::string& display, const OutputSpec& spec)
      : FileWriter(display, spec), m_tmp(tmp_dir) {
    check_model_folder(display, [&] { return looks_like_orbax(display); }, "Orbax checkpoint");
    check_not_manager_step(display);
    retire_old_store(tmp_dir, display);
    m_input = dynamic_cast<const OrbaxReader*>(spec.template_input);
    // The data file: every chunk in the output's order, then the .zarray documents, then the node.
    std::uint64_t at = 0;
    for (const TensorInfo& t : spec.tensors) {
      m_data_at.push_back(at);
      at += t.count() * dtype_size(t.dtype);
    }
    std::map<std::string, OcdbtValue> keys;
    for (std::size_t i = 0; i < spec.tensors.size(); ++i) {
      const TensorInfo& t = spec.tensors[i];
      const std::string param = param_name(t.name);
      const std::string doc = zarray(t);
      m_docs += doc;
      keys[param + "/.zarray"] = {k_data_file, at, doc.size(), {}};
      at += doc.size();
      if (t.count() > 0) keys[param + "/" + chunk_name(t)] = {k_data_file, m_data_at[i], t.count() * dtype_size(t.dtype), {}};
    }
    if (keys.size() > k_max_entries)
      fail(display, std::to_string(keys.size()) + " keys, more than one OCDBT node holds (" +
                        std::to_string(k_max_entries) + ")");
    m_docs_at = at - m_docs.size();
    m_node = envelope(0x0cdb20de, leaf_node(keys, m_indirect));
    m_node_at = at;
    m_keys = keys.size();
    write_new_file(tmp_dir, k_data_file, "", display);
    open_output(tmp_dir + "/" + k_data_file, O_WRONLY);
    size_output(at + m_node.size());
  }

  void finish() override {
    pwrite_all(m_fd, m_docs.data(), m_docs.size(), m_docs_at, m_display);
    pwrite_all(m_fd, m_node.data(), m_node.size(), m_node_at, m_display);
    FileWriter::finish();
    write_new_file(m_tmp, "manifest.ocdbt", manifest(), m_display);
    write_metadata();
    set_switch_files(m_tmp, {"manifest.ocdbt", "_METADATA", "_CHECKPOINT_METADATA"});
    verify();
  }

 private:
  // The B+tree's one leaf node: every key, each value out of line in the data file.
  static std::string leaf_node(const std::map<std::string, OcdbtValue>& keys, std::uint64_t& indirect) {
    std::string body;
    body += '\0';  // height 0
    data_file_table(body);
    varint(body, keys.size());
    std::string last;
    std::vector<std::uint64_t> prefix;
    for (const auto& [k, v] : keys) {
      std::uint64_t p = 0;
      while (p < last.size() && p < k.size() && last[p] == k[p]) ++p;
      prefix.push_back(p);
      last = k;
    }
    for (std::size_t i = 1; i < prefix.size(); ++i) varint(body, prefix[i]);
    std::size_t i = 0;
    for (const auto& [k, v] : keys) varint(body, k.size() - prefix[i++]);
    i = 0;
    for (const auto& [k, v] : keys) body += k.substr(prefix[i++]);
    indirect = 0;
    for (const auto& [k, v] : keys) varint(body, v.length), indirect += v.length;
    for (std::size_t n = 0; n < keys.size(); ++n) body += '\1';  // out of line
    for (std::size_t n = 0; n < keys.size(); ++n) varint(body, 0);  // data file 0
    for (const auto& [k, v] : keys) varint(body, v.offset);
    return body;
  }

  std::string manifest() const {
    std::string body;
    std::random_device rd;
    for (int i = 0; i < 4; ++i) le(body, rd(), 4);  // the store's uuid
    body += '\0';                                  // manifest kind: single
    varint(body, 100);                             // max_inline_value_bytes (tensorstore's default)
    varint(body, std::max<std::uint64_t>(8u << 20, m_node.size()));  // max_decoded_node_bytes
    body += '\4';                                  // version_tree_arity_log2 (tensorstore's default)
    varint(body, 0);                               // uncompressed
    data_file_table(body);
    varint(body, 1);  // one version
    varint(body, 1);  // generation 1
    body += '\0';     // root height 0
    varint(body, 0);  // data file 0
    varint(body, m_node_at);
    varint(body, m_node.size());
    varint(body, m_keys);
    varint(body, m_node.size());
    varint(body, m_indirect);
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    le(body, static_cast<std::uint64_t>(now.count()), 8);
    varint(body, 0);  // no older version nodes
    return envelope(0x0cdb3a2a, body);
  }

  // _METADATA: input 1's tree less the leaves left out; _CHECKPOINT_METADATA: input 1's with the provenance.
  void write_metadata() {
    ordered_json meta, checkpoint;
    if (m_input) {
      meta = read_json(m_input->item() + "/_METADATA");
      std::set<std::string> out;
      for (const TensorInfo& t : m_spec.tensors) out.insert(t.name);
      std::set<std::string> arrays;
      for (const Leaf& l : m_input->leaves()) {
        std::string name;
        for (const auto& k : l.keys) {
          if (!name.empty()) name += '/';
          name += k;
        }
        arrays.insert(name);
      }
      ordered_json tree = ordered_json::object();
      for (const auto& [k, v] : meta["tree_metadata"].items()) {
        std::string name;
        for (const auto& key : v["key_metadata"]) {
          if (!name.empty()) name += '/';
          name += key["key"].get<std::string>();
        }
        if (!arrays.count(name) || out.count(name)) tree[k] = v;
      }
      meta["tree_metadata"] = tree;
      for (const std::string& at : {m_input->step(), m_input->item()})
        if (fs::is_regular_file(at + "/_CHECKPOINT_METADATA")) {
          checkpoint = read_json(at + "/_CHECKPOINT_METADATA");
          break;
        }
      const std::string sharding = m_input->item() + "/_sharding";
      if (fs::is_regular_file(sharding))
        write_new_file(m_tmp, "_sharding", read_small_text(sharding, 256u << 20, "sharding"), m_display);
    } else {
      meta = fresh_metadata(m_spec.tensors);
    }
    meta["use_ocdbt"] = true;
    meta["use_zarr3"] = false;
    meta["store_array_data_equal_to_fill_value"] = true;
    if (!checkpoint.is_object() || checkpoint.empty())
      checkpoint = {{"item_handlers",
                     "orbax.checkpoint._src.handlers.standard_checkpoint_handler.StandardCheckpointHandler"},
                    {"metrics", ordered_json::object()},
                    {"performance_metrics", ordered_json::object()}};
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    checkpoint["init_timestamp_nsecs"] = now.count();
    checkpoint["commit_timestamp_nsecs"] = now.count();
    if (!checkpoint.contains("custom_metadata") || !checkpoint["custom_metadata"].is_object())
      checkpoint["custom_metadata"] = ordered_json::object();
    for (const auto& [k, v] : m_spec.provenance.entries()) checkpoint["custom_metadata"][k] = v;
    write_new_file(m_tmp, "_METADATA", meta.dump(), m_display);
    write_new_file(m_tmp, "_CHECKPOINT_METADATA", checkpoint.dump(), m_display);
  }

  // Reads the folder back, so that a checkpoint wavg could not read again is never committed.
  void verify() const {
    const auto broken = [&](const std::string& what) {
      fail(m_display, "the output does not read back as written (" + what + "); nothing was written");
    };
    std::unique_ptr<OrbaxReader> back;
    try {
      back = std::make_unique<OrbaxReader>(m_tmp);
    } catch (const Error& e) {
      broken(e.problems().empty() ? std::string(e.what()) : e.problems().front().what);
    }
    if (const auto difference = read_back_difference(back->tensors(), m_spec.tensors)) broken(*difference);
  }

  std::string m_tmp;
  const OrbaxReader* m_input = nullptr;
  std::string m_docs, m_node;
  std::uint64_t m_docs_at = 0, m_node_at = 0, m_keys = 0, m_indirect = 0;
};

}  // namespace

std::unique_ptr<Writer> create_orbax_writer(const std::string& tmp_dir, const std::string& display_path,
                                            const OutputSpec& spec) {
  return std::make_unique<OrbaxWriter>(tmp_dir, display_path, spec);
}

}  // namespace wavg::orbax
