// Reading PEFT adapter folders: the weights through their own format's reader, the config into LoraAdapter, and
// every tensor's role from the names peft gives them, checked against the config before anything is served
// (layout in peft.hpp).

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "json/duplicate_keys.hpp"
#include "peft/peft.hpp"
#include "pytorch/pytorch.hpp"
#include "safetensors/safetensors.hpp"
#include "small_text.hpp"
#include "wavg/error.hpp"
#include "wavg/mapped_file.hpp"
#include "wavg/utf8.hpp"

namespace wavg::peft {

namespace {

namespace fs = std::filesystem;

// A config is a few kB; a long target_modules list of a big model stays far under this.
constexpr std::uint64_t k_max_config = 16ull << 20;

constexpr const char* k_weight_files[] = {"adapter_model.safetensors", "adapter_model.bin"};

std::vector<std::string> string_list(const nlohmann::json& v, const std::string& path, const char* key) {
  std::vector<std::string> out;
  if (v.is_null()) return out;
  if (v.is_string()) return {v.get<std::string>()};
  if (!v.is_array()) fail(path, std::string(key) + " is neither a list of names nor a string");
  for (const auto& e : v) {
    if (!e.is_string()) fail(path, std::string(key) + " holds a value that is not a name");
    out.push_back(e.get<std::string>());
  }
  return out;
}

double positive_number(const nlohmann::json& doc, const char* key, const std::string& path) {
  if (!doc.contains(key)) fail(path, std::string("has no ") + key);
  const nlohmann::json& v = doc[key];
  if (!v.is_number() || !(v.get<double>() > 0)) fail(path, std::string(key) + " is not a positive number");
  return v.get<double>();
}

// The value of the first pattern (in the config's order) matching `module`, as peft's get_pattern_key finds it.
const nlohmann::ordered_json* pattern_value(const nlohmann::ordered_json& patterns, const std::string& module,
                                            const std::string& path) {
  if (!patterns.is_object()) return nullptr;
  for (const auto& [key, value] : patterns.items()) {
    try {
      if (std::regex_match(module, std::regex("(.*\\.)?(" + key + ")"))) return &value;
    } catch (const std::regex_error&) {
      fail(path, "pattern " + key + " is not a regular expression");
    }
  }
  return nullptr;
}

// The suffixes peft gives a module's tensors, and the role each has.
struct Suffix {
  const char* text;
  Role role;
};
constexpr Suffix k_suffixes[] = {{".lora_A.weight", Role::lora_a},
                                 {".lora_B.weight", Role::lora_b},
                                 {".lora_embedding_A", Role::lora_a},
                                 {".lora_embedding_B", Role::lora_b},
                                 {".lora_magnitude_vector.weight", Role::dora_magnitude},
                                 {".lora_magnitude_vector", Role::dora_magnitude}};

}  // namespace

std::string pattern_target(const std::string& module) {
  static const std::string k_prefix = "base_model.model.";
  return module.starts_with(k_prefix) ? module.substr(k_prefix.size()) : module;
}

bool looks_like_peft(const SniffInput& input) {
  if (!input.folder()) return false;
  const fs::path folder(input.path());
  std::error_code ec;
  if (!fs::exists(folder / "adapter_config.json", ec)) return false;
  for (const char* w : k_weight_files)
    if (fs::exists(folder / w, ec)) return true;
  return false;
}

AdapterReader::AdapterReader(const std::string& path) : ListedReader(path, FormatId::peft) {
  while (m_path.size() > 1 && m_path.back() == '/') m_path.pop_back();
  m_folder = m_path;
  for (const char* w : k_weight_files) {
    const std::string full = (fs::path(m_folder) / w).string();
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(full, ec))) continue;
    if (fs::is_symlink(fs::symlink_status(full, ec)))
      fail(full, "is a symbolic link, which wavg does not follow out of an adapter folder");
    if (std::string(w).ends_with(".safetensors"))
      m_weights = std::make_unique<SafetensorsReader>(full);
    else
      m_weights = std::make_unique<pytorch::PytorchReader>(full);
    break;
  }
  if (!m_weights) fail(m_path, "an adapter folder without adapter_model.safetensors or adapter_model.bin");
  m_tensors = m_weights->tensors();
  m_metadata = m_weights->metadata();
  read_config();
  find_modules();
  m_layout = std::string(m_adapter.dora ? "DoRA" : "LoRA") + " adapter of " + std::to_string(m_adapter.modules.size()) +
             (m_adapter.modules.size() == 1 ? " module, " : " modules, ") + fs::path(m_weights->path()).filename().string();
}

void AdapterReader::read_config() {
  const std::string path = (fs::path(m_folder) / "adapter_config.json").string();
  m_config_text = read_small_text(path, k_max_config, "config");
  if (!valid_utf8(reinterpret_cast<const unsigned char*>(m_config_text.data()), m_config_text.size()))
    fail(path, "config is not valid UTF-8");
  DuplicateKeys sax;
  nlohmann::json::sax_parse(m_config_text, &sax);
  if (!sax.error.empty())
    fail(path, "config is not valid JSON (at byte " + std::to_string(sax.error_byte) + ": " + sax.error + ")");
  if (!sax.duplicate.empty()) fail(path, "config has the key " + sax.duplicate + " twice");
  if (sax.too_deep) fail(path, "config nests deeper than " + std::to_string(DuplicateKeys::k_max_depth) + " levels");
  const auto doc = nlohmann::ordered_json::parse(m_config_text);
  if (!doc.is_object()) fail(path, "config is not a JSON object");
  if (doc.contains("peft_type") && doc["peft_type"] != "LORA")
    fail(path, "peft_type " + doc["peft_type"].dump() + ": wavg reads LoRA adapters (peft_type LORA) only");
  const double r = positive_number(doc, "r", path);
  if (r != static_cast<double>(static_cast<std::uint64_t>(r))) fail(path, "r is not a whole number");
  m_adapter.r = static_cast<std::uint64_t>(r);
  m_adapter.alpha = doc.contains("lora_alpha") ? positive_number(doc, "lora_alpha", path) : 8.0;  // peft's default
  auto flag = [&](const char* key) {
    if (!doc.contains(key) || doc[key].is_null()) return false;
    if (!doc[key].is_boolean()) fail(path, std::string(key) + " is not true or false");
    return doc[key].get<bool>();
  };
  m_adapter.rslora = flag("use_rslora");
  m_adapter.dora = flag("use_dora");
  if (doc.contains("base_model_name_or_path") && doc["base_model_name_or_path"].is_string())
    m_adapter.base_model = doc["base_model_name_or_path"].get<std::string>();
  if (doc.contains("target_modules"))
    m_adapter.target_modules = string_list(doc["target_modules"], path, "target_modules");
  if (doc.contains("modules_to_save"))
    m_adapter.modules_to_save = string_list(doc["modules_to_save"], path, "modules_to_save");
}

void AdapterReader::find_modules() {
  const std::string config = (fs::path(m_folder) / "adapter_config.json").string();
  const auto doc = nlohmann::ordered_json::parse(m_config_text);
  const nlohmann::ordered_json none = nlohmann::ordered_json::object();
  const auto& ranks = doc.contains("rank_pattern") ? doc["rank_pattern"] : none;
  const auto& alphas = doc.contains("alpha_pattern") ? doc["alpha_pattern"] : none;
  std::map<std::string, std::size_t> module_of;
  for (std::size_t i = 0; i < m_tensors.size(); ++i) {
    TensorInfo& t = m_tensors[i];
    const Suffix* found = nullptr;
    for (const Suffix& s : k_suffixes)
      if (t.name.ends_with(s.text)) {
        found = &s;
        break;
      }
    if (!found) {
      // A tensor besides the factors: a module of modules_to_save (peft saves it under the module's own name).
      const bool saved = std::any_of(m_adapter.modules_to_save.begin(), m_adapter.modules_to_save.end(),
                                     [&](const std::string& m) { return t.name.find(m) != std::string::npos; });
      t.role = saved ? Role::saved_module : Role::weight;
      continue;
    }
    t.role = found->role;
    const std::string name = t.name.substr(0, t.name.size() - std::string_view(found->text).size());
    auto [it, fresh] = module_of.emplace(name, m_adapter.modules.size());
    if (fresh) m_adapter.modules.push_back({.name = name});
    LoraModule& m = m_adapter.modules[it->second];
    std::size_t& slot = found->role == Role::lora_a ? m.a : found->role == Role::lora_b ? m.b : m.magnitude;
    if (slot != k_no_tensor) fail(m_weights->path(), "holds two tensors for " + t.name);
    slot = i;
  }
  for (LoraModule& m : m_adapter.modules) {
    if (m.a == k_no_tensor || m.b == k_no_tensor)
      fail(m_weights->path(), "module " + m.name + " has factor " + (m.a == k_no_tensor ? "B" : "A") +
                                  " but not factor " + (m.a == k_no_tensor ? "A" : "B"));
    if (m.magnitude != k_no_tensor && !m_adapter.dora)
      fail(m_weights->path(), "module " + m.name + " has a DoRA magnitude, but the config's use_dora is not true");
    const TensorInfo& a = m_tensors[m.a];
    const TensorInfo& b = m_tensors[m.b];
    if (a.shape.size() != 2 || b.shape.size() != 2 || !is_float(a.dtype) || !is_float(b.dtype))
      fail(m_weights->path(), "module " + m.name + ": its factors are not float matrices (A " + shape_string(a.shape) +
                                  ", B " + shape_string(b.shape) + ")");
    const std::string target = pattern_target(m.name);
    m.rank = m_adapter.r;
    if (const nlohmann::ordered_json* v = pattern_value(ranks, target, config)) {
      if (!v->is_number_unsigned() || v->get<std::uint64_t>() == 0)
        fail(config, "rank_pattern's rank for " + target + " is not a positive whole number");
      m.rank = v->get<std::uint64_t>();
    }
    m.alpha = m_adapter.alpha;
    if (const nlohmann::ordered_json* v = pattern_value(alphas, target, config)) {
      if (!v->is_number() || !(v->get<double>() > 0))
        fail(config, "alpha_pattern's alpha for " + target + " is not a positive number");
      m.alpha = v->get<double>();
    }
    if (a.shape[0] != m.rank || b.shape[1] != m.rank)
      fail(m_weights->path(), "module " + m.name + " has rank " + std::to_string(m.rank) + " by its config, but A " +
                                  shape_string(a.shape) + " and B " + shape_string(b.shape));
    m.scale = lora_scale(m.alpha, m.rank, m_adapter.rslora);
  }
}

std::vector<std::string> AdapterReader::files() const {
  return {(fs::path(m_folder) / "adapter_config.json").string(), m_weights->path()};
}

void AdapterReader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  m_weights->read(index, offset, count, dst);
}

const void* AdapterReader::view(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  return m_weights->view(index, offset, count);
}

void AdapterReader::release(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  m_weights->release(index, offset, count);
}

void AdapterReader::prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  m_weights->prefetch(index, offset, count);
}

}  // namespace wavg::peft
