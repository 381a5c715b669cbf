// What an output replaces in an existing model folder (--force): the old model's weights and indexes, found by the
// names wavg writes and by the old indexes' weight maps, and nothing else of the folder (hf.hpp).

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "hf/hf.hpp"
#include "wavg/atomic_directory.hpp"
#include "wavg/error.hpp"
#include "wavg/removal.hpp"

namespace wavg::hf {

namespace {

namespace fs = std::filesystem;

// The files a reader looks for, in its order: the first found is the model.
constexpr const char* k_main_files[] = {"model.safetensors.index.json", "model.safetensors",
                                        "pytorch_model.bin.index.json", "pytorch_model.bin"};

bool is_regular_no_link(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_weights_shard(const std::string& name) {
  return name.size() > 4 && (name.ends_with(".safetensors") || name.ends_with(".bin"));
}

// The shard names an old index lists that are plain files of the folder; none when the index does not parse (it
// is the old model's, not an input: a broken one still goes).
void add_listed_shards(const fs::path& index, std::vector<std::string>& out) {
  std::error_code ec;
  if (!is_regular_no_link(index) || fs::file_size(index, ec) > (64ull << 20)) return;
  std::ifstream in(index, std::ios::binary);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (!doc.is_object() || !doc.contains("weight_map") || !doc["weight_map"].is_object()) return;
  for (const auto& [tensor, shard] : doc["weight_map"].items()) {
    if (!shard.is_string()) continue;
    const std::string name = shard.get<std::string>();
    if (name.find('/') == std::string::npos && is_weights_shard(name) && is_regular_no_link(index.parent_path() / name))
      out.push_back(name);
  }
}

}  // namespace

bool is_shard_name(const std::string& name) {
  static const std::regex shard(R"((model|pytorch_model)-[0-9]{5}-of-[0-9]{5}(-[A-Za-z0-9]{6})?\.(safetensors|bin))");
  return std::regex_match(name, shard);
}

void check_target_folder(const std::string& folder) {
  check_model_folder(
      folder, [&] { return looks_like_hf(folder); }, "Hugging Face model");
}

void check_replaceable(const std::string& folder, const std::string& name) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(fs::path(folder) / name, ec);
  if (!fs::exists(st) || fs::is_regular_file(st)) return;
  const char* what = fs::is_directory(st) ? "a folder" : fs::is_symlink(st) ? "a symbolic link" : "not a regular file";
  throw Error(ExitCode::usage, (fs::path(folder) / name).string(),
              std::string("is ") + what + " where the output writes a file; wavg replaces only the files it writes");
}

std::vector<std::string> old_model_files(const std::string& folder) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(folder, ec))) return out;
  for (const char* name : k_main_files)
    if (is_regular_no_link(fs::path(folder) / name)) out.push_back(name);
  for (const char* name : {k_main_files[0], k_main_files[2]}) add_listed_shards(fs::path(folder) / name, out);
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    const std::string name = e.path().filename().string();
    if (is_shard_name(name) && is_regular_no_link(e.path()) && std::find(out.begin(), out.end(), name) == out.end())
      out.push_back(name);
  }
  // removal.hpp's rule decides: a weights file or index of the model's names, a plain file of the folder. Only an
  // existing folder has old files, and AtomicDirectory replaces one only with --force.
  const OwnFiles own{folder,
                     "Hugging Face weights file",
                     [](const std::string& name) {
                       return is_weights_shard(name) || std::find(std::begin(k_main_files), std::end(k_main_files),
                                                                  name) != std::end(k_main_files);
                     },
                     {}};
  return removable_files(own, out, Overwrite::yes);
}

}  // namespace wavg::hf
