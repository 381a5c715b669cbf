// A recipe's chat_template (recipe_chat.hpp): read from the models' tokenizer files, written into the output's.

#include "cli/recipe_chat.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "wavg/error.hpp"

namespace wavg::cli {

namespace fs = std::filesystem;

// A tokenizer file is small; one larger than this is not a tokenizer file, config or template we should hold.
constexpr std::uintmax_t k_max_tokenizer_file = 64u << 20;

std::optional<std::string> read_tokenizer_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec || size > k_max_tokenizer_file)
    throw Error(ExitCode::runtime, path.string(), "not a tokenizer file wavg reads (over 64 MiB, or unreadable)");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (!in) throw Error(ExitCode::runtime, path.string(), "cannot read the file");
  return buf.str();
}

namespace {

const auto read_small = read_tokenizer_file;

nlohmann::ordered_json parse_config(const fs::path& path, const std::string& text) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) throw Error(ExitCode::runtime, path.string(), "not a JSON object");
  return doc;
}

// Python's str.strip() on ASCII white space.
std::string strip(const std::string& s) {
  const char* ws = " \t\n\r\v\f";
  const std::size_t first = s.find_first_not_of(ws);
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(ws) - first + 1);
}

}  // namespace

std::string model_chat_template(const std::string& folder) {
  if (auto jinja = read_small(fs::path(folder) / "chat_template.jinja")) return *jinja;
  const fs::path path = fs::path(folder) / "tokenizer_config.json";
  const auto text = read_small(path);
  if (!text) return {};
  const nlohmann::ordered_json doc = parse_config(path, *text);
  const auto it = doc.find("chat_template");
  if (it == doc.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array())  // transformers' list of named templates: the default one is the template
    for (const auto& entry : *it)
      if (entry.is_object() && entry.value("name", "") == "default" && entry.contains("template") &&
          entry["template"].is_string())
        return entry["template"].get<std::string>();
  return {};
}

std::string resolve_chat_template(const std::string& setting, const std::vector<std::string>& models) {
  if (setting != "auto") return setting;
  std::vector<std::pair<std::string, int>> counts;  // in the models' order, so equal counts go to the earlier
  for (const std::string& m : models) {
    const std::string t = strip(model_chat_template(m));
    if (t.empty()) continue;
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == t; });
    if (it == counts.end())
      counts.emplace_back(t, 1);
    else
      ++it->second;
  }
  std::string best;
  int most = 0;
  for (const auto& [t, n] : counts)
    if (n > most) {
      best = t;
      most = n;
    }
  return best;
}

std::vector<std::pair<std::string, std::string>> chat_template_files(const std::string& donor, const std::string& text,
                                                                     std::optional<std::string> donor_config) {
  const fs::path path = fs::path(donor) / "tokenizer_config.json";
  const auto config = donor_config ? donor_config : read_small(path);
  if (!config)
    throw Error(ExitCode::usage, donor,
                "chat_template: the tokenizer source has no tokenizer_config.json, so the output would have no "
                "tokenizer to hold the template");
  nlohmann::ordered_json doc = parse_config(path, *config);
  doc["chat_template"] = text;
  try {
    return {{"chat_template.jinja", text}, {"tokenizer_config.json", doc.dump(2) + "\n"}};
  } catch (const nlohmann::json::exception&) {
    throw Error(ExitCode::usage, donor, "chat_template: the template is not valid UTF-8");
  }
}

}  // namespace wavg::cli
