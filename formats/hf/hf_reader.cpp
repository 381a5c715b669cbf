// Reading Hugging Face model folders: the index is checked against the folder and against every shard before any
// tensor is served, so a merge either sees every weight of the model exactly once or stops (layout in hf.hpp).

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>

#include "hf/hf.hpp"
#include "json/duplicate_keys.hpp"
#include "pytorch/pytorch.hpp"
#include "safetensors/safetensors.hpp"
#include "small_text.hpp"
#include "wavg/error.hpp"
#include "wavg/mapped_file.hpp"
#include "wavg/utf8.hpp"

namespace wavg::hf {

namespace {

namespace fs = std::filesystem;

// Indexes hold one line per tensor; the largest real ones (a few thousand tensors) are well under 1 MiB.
constexpr std::uint64_t k_max_index = 64ull << 20;

enum class Kind { safetensors, bin };

struct Layout {
  const char* index;   // the sharded layout's index, or nullptr
  const char* single;  // the one-file layout
  Kind kind;
};
constexpr Layout k_layouts[] = {
    {"model.safetensors.index.json", "model.safetensors", Kind::safetensors},
    {"pytorch_model.bin.index.json", "pytorch_model.bin", Kind::bin},
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// FOLDER/NAME, or NAME alone in the current folder (as the user named it).
std::string in_folder(const std::string& folder, const std::string& name) {
  return folder == "." ? name : (fs::path(folder) / name).string();
}

bool is_file_no_link(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The kind of shards an index file names, from its name; nullopt for another index (tf_model.h5.index.json).
std::optional<Kind> index_kind(const std::string& name) {
  if (ends_with(name, ".safetensors.index.json")) return Kind::safetensors;
  if (ends_with(name, ".bin.index.json")) return Kind::bin;
  return std::nullopt;
}

std::string read_index(const std::string& path) { return read_small_text(path, k_max_index, "index"); }

// "model-00002-of-00003.safetensors" -> 3; 0 when the name is not the ecosystem's shard pattern.
std::uint64_t shard_count_in_name(const std::string& name, Kind kind) {
  static const std::regex st(R"(.+-([0-9]{1,9})-of-([0-9]{1,9})\.safetensors)");
  static const std::regex bin(R"(.+-([0-9]{1,9})-of-([0-9]{1,9})\.bin)");
  std::smatch m;
  if (!std::regex_match(name, m, kind == Kind::safetensors ? st : bin)) return 0;
  return std::stoull(m[2].str());
}

}  // namespace

bool FolderReader::is_weights_file(const std::string& name) {
  static const char* const k_weights[] = {".safetensors", ".bin",  ".pt",   ".pth", ".ckpt", ".h5",
                                          ".msgpack",     ".gguf", ".onnx", ".npz", ".pkl",  ".index.json"};
  return std::any_of(std::begin(k_weights), std::end(k_weights), [&](const char* e) { return ends_with(name, e); });
}

bool looks_like_hf(const SniffInput& input) {
  const std::string& path = input.path();
  if (input.folder()) {
    for (const Layout& l : k_layouts)
      if (fs::exists(fs::path(path) / l.index) || fs::exists(fs::path(path) / l.single)) return true;
    return false;
  }
  if (!index_kind(fs::path(path).filename().string())) return false;
  if (input.bytes().size() > k_max_index) return false;
  const nlohmann::json doc = nlohmann::json::parse(input.text(), nullptr, false);
  return doc.is_object() && doc.contains("weight_map");
}

FolderReader::FolderReader(const std::string& path) : ListedReader(path, FormatId::hf) {
  while (m_path.size() > 1 && m_path.back() == '/') m_path.pop_back();
  if (is_dir(m_path)) {
    m_folder = m_path;
    for (const Layout& l : k_layouts) {
      if (fs::exists(fs::symlink_status(fs::path(m_folder) / l.index))) {
        open_index(l.index);
        break;
      }
      if (fs::exists(fs::symlink_status(fs::path(m_folder) / l.single))) {
        add_shard(l.single);
        break;
      }
    }
    if (m_shards.empty())
      fail(m_path, "a folder without model.safetensors, pytorch_model.bin or their sharded indexes");
  } else {
    const fs::path p(m_path);
    m_folder = p.has_parent_path() ? p.parent_path().string() : ".";
    open_index(p.filename().string());
  }
  for (const auto& [k, v] : m_shards.front()->metadata()) m_metadata.emplace(k, v);
}

void FolderReader::open_index(const std::string& index_name) {
  m_index = in_folder(m_folder, index_name);
  const std::string text = read_index(m_index);
  if (!valid_utf8(reinterpret_cast<const unsigned char*>(text.data()), text.size()))
    fail(m_index, "index is not valid UTF-8");
  DuplicateKeys sax;
  nlohmann::json::sax_parse(text, &sax);
  if (!sax.error.empty())
    fail(m_index, "index is not valid JSON (at byte " + std::to_string(sax.error_byte) + ": " + sax.error + ")");
  if (!sax.duplicate.empty()) fail(m_index, "index has the key " + sax.duplicate + " twice");
  if (sax.too_deep) fail(m_index, "index nests deeper than " + std::to_string(DuplicateKeys::k_max_depth) + " levels");
  const nlohmann::json doc = nlohmann::json::parse(text);
  if (!doc.is_object() || !doc.contains("weight_map") || !doc["weight_map"].is_object())
    fail(m_index, "index has no weight_map object");
  const std::optional<Kind> kind = index_kind(index_name);
  if (!kind) fail(m_index, "an index of neither safetensors nor pytorch_model.bin shards");

  // Shards in the order of their names; each tensor's shard as the index says.
  std::map<std::string, std::string> shard_of;
  std::set<std::string> names;
  for (const auto& [tensor, shard] : doc["weight_map"].items()) {
    if (!shard.is_string()) fail(m_index, "weight_map entry " + tensor + " is not a file name");
    shard_of[tensor] = shard.get<std::string>();
    names.insert(shard.get<std::string>());
  }
  if (names.empty()) fail(m_index, "weight_map names no tensor");
  for (const std::string& n : names) {
    const std::uint64_t of = shard_count_in_name(n, *kind);
    if (of != 0 && of != names.size())
      fail(m_index,
           "names " + std::to_string(names.size()) + " shards, but " + n + " says there are " + std::to_string(of));
  }
  for (const std::string& n : names) add_shard(n);
  check_unlisted_shards(index_name);

  // Both ways: every tensor of a shard is listed for that shard, every listed tensor is in its shard.
  std::set<std::string> seen;
  for (std::size_t i = 0; i < m_tensors.size(); ++i) {
    const std::string& name = m_tensors[i].name;
    const std::string& shard = m_shard_names[m_where[i].first];
    const auto it = shard_of.find(name);
    if (it == shard_of.end()) fail(m_index, "does not list the tensor " + name + " of the shard " + shard);
    if (it->second != shard)
      fail(m_index, "lists the tensor " + name + " in " + it->second + ", but " + shard + " holds it too");
    seen.insert(name);
  }
  for (const auto& [tensor, shard] : shard_of)
    if (!seen.count(tensor)) fail(m_index, "lists the tensor " + tensor + " in " + shard + ", which lacks it");

  if (doc.contains("metadata") && doc["metadata"].is_object())
    for (const auto& [k, v] : doc["metadata"].items())
      if (v.is_string()) m_metadata[k] = v.get<std::string>();
}

void FolderReader::add_shard(const std::string& name) {
  const std::string shown = m_index.empty() ? m_path : m_index;
  const fs::path rel(name);
  if (name.empty() || rel.is_absolute()) fail(shown, "shard path " + name + " is not relative to the folder");
  for (const fs::path& part : rel)
    if (part == "..") fail(shown, "shard path " + name + " leads out of the folder");
  const std::string full = in_folder(m_folder, rel.string());
  if (const std::string out = link_out_of_folder(m_folder, full); !out.empty())
    fail(full, out + (fs::is_symlink(fs::symlink_status(full))
                          ? " (a hub cache snapshot links to its blobs: download it with --local-dir)"
                          : ""));
  if (!is_file_no_link(full)) {
    std::string why;
    const int fd = try_open_regular_file(full, FollowLinks::no, why);
    if (fd >= 0) ::close(fd);
    fail(full, (why.empty() ? std::string("is not a regular file") : why) + " (a shard " + shown + " names)");
  }

  std::unique_ptr<Reader> r;
  if (ends_with(name, ".safetensors"))
    r = std::make_unique<SafetensorsReader>(full);
  else
    r = std::make_unique<pytorch::PytorchReader>(full);
  const std::size_t s = m_shards.size();
  for (std::size_t i = 0; i < r->tensors().size(); ++i) {
    m_tensors.push_back(r->tensors()[i]);
    m_where.emplace_back(s, i);
  }
  m_shard_names.push_back(name);
  m_shards.push_back(std::move(r));
}

void FolderReader::check_unlisted_shards(const std::string& index_name) const {
  const Kind kind = *index_kind(index_name);
  const std::set<std::string> listed(m_shard_names.begin(), m_shard_names.end());
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(m_folder, ec)) {
    const std::string name = e.path().filename().string();
    if (shard_count_in_name(name, kind) != 0 && !listed.count(name))
      fail(in_folder(m_folder, name), "is a shard that the index " + index_name + " does not name");
  }
}

std::vector<std::string> FolderReader::files() const {
  std::vector<std::string> out;
  if (!m_index.empty()) out.push_back(m_index);
  for (const auto& r : m_shards) out.push_back(r->path());
  return out;
}

std::string FolderReader::layout() const {
  const std::string kind = m_shards.front()->format_name();
  if (m_index.empty()) return "one " + kind + " file";
  return std::to_string(m_shards.size()) + " " + kind + " shards";
}

std::vector<std::string> FolderReader::kept_entries() const {
  std::vector<std::string> out;
  for (std::size_t s = 0; s < m_shards.size(); ++s)
    for (const std::string& k : m_shards[s]->kept_entries()) out.push_back(m_shard_names[s] + ": " + k);
  return out;
}

void FolderReader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  const auto [s, i] = m_where[index];
  m_shards[s]->read(i, offset, count, dst);
}

const void* FolderReader::view(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const auto [s, i] = m_where[index];
  return m_shards[s]->view(i, offset, count);
}

void FolderReader::release(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const auto [s, i] = m_where[index];
  m_shards[s]->release(i, offset, count);
}

void FolderReader::prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const auto [s, i] = m_where[index];
  m_shards[s]->prefetch(i, offset, count);
}

}  // namespace wavg::hf
