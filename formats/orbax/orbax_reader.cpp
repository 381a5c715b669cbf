// The Orbax reader (layout in orbax.hpp): the tree from _METADATA, each array leaf's zarr metadata from the OCDBT
// store or its folder, and the chunks decoded one at a time as the engine reads blocks.

#include <algorithm>
#include <filesystem>
#include <list>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "flax/flax.hpp"
#include "json/duplicate_keys.hpp"
#include "orbax/orbax.hpp"
#include "small_text.hpp"
#include "wavg/error.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg::orbax {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::uint64_t k_max_metadata = 256u << 20;
// Decoded chunks kept for the next blocks (a tensor split column-wise reads its chunks in turn, row by row).
constexpr std::uint64_t k_cache_bytes = 256u << 20;

bool is_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

// The folder holding _METADATA: `path` itself, or its one subfolder that does (a CheckpointManager's item).
std::string item_folder(const std::string& path) {
  if (is_file(path + "/_METADATA")) return path;
  std::vector<std::string> items;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(path, ec))
    if (e.is_directory(ec) && is_file(e.path().string() + "/_METADATA")) items.push_back(e.path().filename().string());
  std::sort(items.begin(), items.end());
  if (items.empty()) fail(path, "an Orbax step folder without _METADATA (nor an item folder holding one)");
  if (items.size() > 1)
    fail(path, "holds several Orbax items (" + items[0] + ", " + items[1] + "); give the item's folder");
  return path + "/" + items[0];
}

// A key of the tree, refused where it could not be a file name or a part of wavg's '/'-joined names.
std::string checked_key(const std::string& file, const json& k) {
  if (!k.is_object() || !k.contains("key") || !k["key"].is_string()) fail(file, "a key_metadata entry without a key");
  const std::string key = k["key"];
  if (key.empty() || key == "." || key == ".." || key.find('/') != std::string::npos ||
      key.find('\0') != std::string::npos)
    fail(file, "the tree key '" + clipped(key, 60) + "' cannot name an array (empty, '.', '..', or holding '/')");
  return key;
}

std::string joined(const std::vector<std::string>& keys, char sep) {
  std::string out;
  for (const auto& k : keys) {
    if (!out.empty()) out += sep;
    out += k;
  }
  return out;
}

}  // namespace

struct OrbaxReader::Cache {
  struct Entry {
    std::size_t tensor;
    Shape chunk;
    std::vector<unsigned char> bytes;
  };
  std::list<Entry> entries;  // most recent first
  std::uint64_t bytes = 0;
  std::map<std::string, std::unique_ptr<MappedFile>> files;  // per-leaf folders' chunk files, mapped once
};

bool looks_like_orbax(const SniffInput& input) {
  if (!input.folder()) return false;
  if (is_file(input.path() + "/_METADATA")) return true;
  if (!is_file(input.path() + "/_CHECKPOINT_METADATA")) return false;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(input.path(), ec))
    if (e.is_directory(ec) && is_file(e.path().string() + "/_METADATA")) return true;
  return false;
}

OrbaxReader::OrbaxReader(const std::string& path)
    : ListedReader(path, FormatId::orbax), m_cache(std::make_unique<Cache>()) {
  while (m_path.size() > 1 && m_path.back() == '/') m_path.pop_back();
  m_item = item_folder(m_path);
  const std::string meta_path = m_item + "/_METADATA";
  const std::string meta_text = read_small_text(meta_path, k_max_metadata, "metadata");
  const json meta = json::parse(meta_text, nullptr, false);
  if (meta.is_discarded() || !meta.is_object()) fail(meta_path, "is not a JSON object");
  if (!meta.contains("tree_metadata") || !meta["tree_metadata"].is_object())
    fail(meta_path, "has no tree_metadata (an Orbax checkpoint older than orbax-checkpoint 0.5?)");
  const bool zarr3 = meta.value("use_zarr3", false);
  if (is_file(m_item + "/manifest.ocdbt")) m_store = std::make_unique<OcdbtStore>(m_item);
  const std::string array_file = zarr3 ? "zarr.json" : ".zarray";
  std::set<std::string> names;
  // The leaves in the file's order, which a json (a std::map) does not keep (duplicate_keys.hpp says why not
  // ordered_json); a key given twice anywhere is refused, as an ambiguous tree.
  DuplicateKeys scan;
  scan.ordered_under = "tree_metadata";
  json::sax_parse(meta_text, &scan);
  if (!scan.duplicate.empty()) fail(meta_path, "has the key " + clipped(scan.duplicate, 80) + " twice");
  if (scan.too_deep) fail(meta_path, "nests deeper than " + std::to_string(DuplicateKeys::k_max_depth) + " levels");
  const json& tree = meta["tree_metadata"];
  for (const std::string& tree_key : scan.ordered) {
    const json& entry = tree.at(tree_key);
    if (!entry.is_object() || !entry.contains("key_metadata") || !entry["key_metadata"].is_array())
      fail(meta_path, "the tree entry " + clipped(tree_key, 80) + " has no key_metadata");
    Leaf leaf;
    for (const auto& k : entry["key_metadata"]) leaf.keys.push_back(checked_key(meta_path, k));
    if (leaf.keys.empty()) fail(meta_path, "a tree entry with an empty key path");
    const std::string name = joined(leaf.keys, '/');
    if (!names.insert(name).second) fail(meta_path, name + ": the key path appears twice");
    const json value = entry.value("value_metadata", json::object());
    const std::string type = value.is_object() ? value.value("value_type", "") : "";
    if (type != "jax.Array" && type != "np.ndarray" && type != "scalar") {
      m_kept.push_back(name + " (" + (type.empty() ? "no value type" : type) + ", input 1's)");
      if (type == "None") m_empty.push_back(name);
      continue;
    }
    leaf.param = joined(leaf.keys, '.');
    const std::string key = leaf.param + "/" + array_file;
    std::string text;
    if (m_store) {
      const auto it = m_store->keys().find(key);
      if (it == m_store->keys().end()) fail(m_item + "/manifest.ocdbt", name + ": the store has no " + key);
      const auto bytes = m_store->bytes(it->second);
      if (bytes.size() > k_max_metadata) fail(m_item + "/manifest.ocdbt", key + " is too large for array metadata");
      text.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    } else {
      const std::string file = m_item + "/" + key;
      if (const std::string out = link_out_of_folder(m_item, file); !out.empty()) fail(file, out);
      text = read_small_text(file, k_max_metadata, "array metadata");
    }
    leaf.array = parse_zarr(m_store ? m_item + "/manifest.ocdbt: " + key : m_item + "/" + key, text, zarr3 ? 3 : 2);
    m_tensors.push_back({name, leaf.array.dtype, leaf.array.shape});
    m_leaves.push_back(std::move(leaf));
  }
  assign_train_state_roles(m_tensors);
  for (const std::string& at : {m_path, m_item}) {
    const std::string file = at + "/_CHECKPOINT_METADATA";
    if (!is_file(file)) continue;
    const json c = json::parse(read_small_text(file, k_max_metadata, "metadata"), nullptr, false);
    if (c.is_object() && c.contains("custom_metadata") && c["custom_metadata"].is_object())
      for (const auto& [k, v] : c["custom_metadata"].items()) m_metadata[k] = v.is_string() ? v.get<std::string>() : v.dump();
    break;
  }
  std::set<std::string> codecs;
  for (const Leaf& l : m_leaves) {
    static const char* const k_names[] = {"uncompressed", "zstd", "gzip", "zlib", "blosc"};
    codecs.insert(k_names[static_cast<int>(l.array.compression)]);
  }
  m_layout = std::string(m_store ? "OCDBT store" : "per-leaf folders") + ", zarr v" + (zarr3 ? "3" : "2");
  for (const auto& c : codecs) m_layout += ", " + c;
}

OrbaxReader::~OrbaxReader() = default;

std::vector<std::string> OrbaxReader::files() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(m_item, ec))
    if (e.is_regular_file(ec)) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  if (m_item != m_path && is_file(m_path + "/_CHECKPOINT_METADATA"))
    out.insert(out.begin(), m_path + "/_CHECKPOINT_METADATA");
  const auto first = std::find(out.begin(), out.end(), m_item + "/_METADATA");
  if (first != out.end()) std::rotate(out.begin(), first, first + 1);  // path()'s defining file first
  return out;
}

std::optional<std::span<const unsigned char>> OrbaxReader::stored(std::size_t t, const Shape& chunk) {
  const Leaf& leaf = m_leaves[t];
  const std::string key = leaf.param + "/" + chunk_key(leaf.array, chunk);
  std::span<const unsigned char> bytes;
  std::string file;
  if (m_store) {
    const auto it = m_store->keys().find(key);
    if (it == m_store->keys().end()) return std::nullopt;
    bytes = m_store->bytes(it->second);
    file = m_item + "/manifest.ocdbt: " + key;
  } else {
    file = m_item + "/" + key;
    auto it = m_cache->files.find(file);
    if (it == m_cache->files.end()) {
      if (!is_file(file)) return std::nullopt;
      if (const std::string out = link_out_of_folder(m_item, file); !out.empty()) fail(file, out);
      it = m_cache->files.emplace(file, std::make_unique<MappedFile>(file)).first;
    }
    bytes = {it->second->data(), static_cast<std::size_t>(it->second->size())};
  }
  if (!leaf.array.sharded) return bytes;
  return shard_entry(file, leaf.array, bytes, chunk);
}

const std::vector<unsigned char>& OrbaxReader::decoded(std::size_t t, const Shape& chunk) {
  auto& entries = m_cache->entries;
  for (auto it = entries.begin(); it != entries.end(); ++it)
    if (it->tensor == t && it->chunk == chunk) {
      entries.splice(entries.begin(), entries, it);
      return entries.front().bytes;
    }
  const ZarrArray& a = m_leaves[t].array;
  const std::size_t elem = dtype_size(a.dtype);
  std::uint64_t n = 1;
  for (const auto c : a.chunk) n *= c;  // fits: checked by parse_zarr
  // Room first: another tensor's chunks go (the engine is done with them), then the oldest of this one's, so that
  // memory holds the chunks of one tensor at most (one chunk, as Orbax writes an unsplit array).
  for (auto it = entries.begin(); it != entries.end();)
    if (it->tensor != t) {
      m_cache->bytes -= it->bytes.size();
      it = entries.erase(it);
    } else {
      ++it;
    }
  while (!entries.empty() && m_cache->bytes + n * elem > k_cache_bytes) {
    m_cache->bytes -= entries.back().bytes.size();
    entries.pop_back();
  }
  std::vector<unsigned char> bytes(n * elem);
  const auto data = stored(t, chunk);
  if (data) {
    decode_chunk(m_path + ": " + m_tensors[t].name, a, *data, bytes);
  } else {
    for (std::uint64_t i = 0; i < n; ++i) std::memcpy(bytes.data() + i * elem, a.fill.data(), elem);
  }
  m_cache->bytes += bytes.size();
  entries.push_front({t, chunk, std::move(bytes)});
  return entries.front().bytes;
}

void OrbaxReader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  const TensorInfo& t = m_tensors[index];
  WAVG_ASSERT(offset + count <= t.count());
  const ZarrArray& a = m_leaves[index].array;
  const std::size_t n = a.shape.size(), elem = dtype_size(a.dtype);
  auto* out = static_cast<unsigned char*>(dst);
  // The dimensions after `split` are whole in every chunk and stored as in the tensor, so `inner` consecutive
  // elements lie consecutively in one chunk; along `split` a chunk holds a run of rows.
  std::ptrdiff_t split = static_cast<std::ptrdiff_t>(n) - 1;
  while (split >= 0 && a.chunk[split] == a.shape[split]) --split;
  std::uint64_t inner = 1;
  for (std::size_t d = split + 1; d < n; ++d) inner *= a.shape[d];
  Shape index_nd(n), chunk(n);
  for (std::uint64_t pos = offset, end = offset + count; pos < end;) {
    std::uint64_t rest = pos;
    for (std::size_t d = n; d-- > 0;) index_nd[d] = rest % a.shape[d], rest /= a.shape[d];
    std::uint64_t local = 0, run = end - pos;
    for (std::size_t d = 0; d < n; ++d) {
      chunk[d] = index_nd[d] / a.chunk[d];
      local = local * a.chunk[d] + index_nd[d] % a.chunk[d];
    }
    if (split >= 0) {
      const std::uint64_t j = static_cast<std::uint64_t>(split);
      const std::uint64_t rows = std::min(a.chunk[j] - index_nd[j] % a.chunk[j], a.shape[j] - index_nd[j]);
      run = std::min(run, rows * inner - pos % inner);
    }
    const std::vector<unsigned char>& bytes = decoded(index, chunk);
    std::memcpy(out + (pos - offset) * elem, bytes.data() + local * elem, run * elem);
    pos += run;
  }
}

}  // namespace wavg::orbax
