// Keras layouts inside HDF5 (described in keras_layout.hpp).

#include "hdf5/keras_layout.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "hdf5/h5.hpp"
#include "wavg/error.hpp"

namespace wavg::keras {

namespace {

constexpr int k_max_depth = 64;

// Compares names with digit runs taken as numbers: "2" < "10", "dense" < "dense_1" < "dense_2" < "dense_10".
bool natural_less(const std::string& a, const std::string& b) {
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && digit(a[ei])) ++ei;
      while (ej < b.size() && digit(b[ej])) ++ej;
      while (i + 1 < ei && a[i] == '0') ++i;  // leading zeros do not count
      while (j + 1 < ej && b[j] == '0') ++j;
      const std::string_view na(a.data() + i, ei - i), nb(b.data() + j, ej - j);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

// Keras visits attributes sorted by name with private ones (_x) last (saving_lib._name_key); HDF5 would put "_"
// before lower-case letters.
bool attribute_less(const std::string& a, const std::string& b) {
  const bool pa = !a.empty() && a[0] == '_', pb = !b.empty() && b[0] == '_';
  if (pa != pb) return pb;
  return natural_less(a, b);
}

enum class Link { group, dataset, other };

struct Child {
  std::string name;
  Link link;
};

// Lists a group's hard links with what they point to. `path` is the group's path with a trailing slash, for the
// message that refuses an external or user-defined link among them: wavg reads no file but its inputs.
std::vector<Child> children(hid_t group, const std::string& path, const std::string& file) {
  struct Visit {
    std::vector<Child> out;
    std::optional<std::string> unreadable;  // a link whose object's header HDF5 cannot read
  } visit;
  auto cb = [](hid_t g, const char* name, const H5L_info_t* info, void* data) -> herr_t {
    auto& v = *static_cast<Visit*>(data);
    Link kind = Link::other;
    if (info->type == H5L_TYPE_HARD) {
      const auto type = h5::object_type(g, name);
      if (!type) {
        v.unreadable = name;
        return 1;  // stops the iteration; reported below (no exception may cross HDF5's C frames)
      }
      if (*type == H5O_TYPE_GROUP) kind = Link::group;
      if (*type == H5O_TYPE_DATASET) kind = Link::dataset;
    }
    v.out.push_back({name, kind});
    return 0;
  };
  h5::check(H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, cb, &visit), file, "cannot list a group");
  H5Eclear2(H5E_DEFAULT);
  if (visit.unreadable) fail(file, path + *visit.unreadable + ": cannot read its object header (corrupt HDF5 file)");
  for (const Child& c : visit.out) h5::check_links(group, c.name, file, path);
  return visit.out;
}

h5::Handle open_group(hid_t parent, const std::string& name, const std::string& path, const std::string& file) {
  return h5::check(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), H5Gclose, file, "cannot open group " + path);
}

// Appends an object's variables (vars/0, 1, ...) and then those of its sub-objects, depth first, in Keras's order.
// `path` is the object's group path with a trailing slash ("" for the root).
void walk_object(hid_t group, const std::string& path, const std::string& file, FoundLayer& into,
                 const std::vector<std::string>& skip = {}, int depth = 0) {
  // Keras nests a few levels; a deeper tree is hostile or a hard-link cycle, which would recurse forever.
  if (depth > k_max_depth)
    fail(file, "groups nested deeper than " + std::to_string(k_max_depth) + " levels under " +
                   (into.group.empty() ? std::string("the root") : into.group) + " (a link cycle?)");
  std::vector<Child> kids = children(group, path, file);
  for (const Child& c : kids) {
    if (c.name != "vars" || c.link != Link::group) continue;
    h5::Handle vars = open_group(group, c.name, path + c.name, file);
    std::vector<std::string> names;
    for (const Child& v : children(vars.get(), path + c.name + "/", file))
      if (v.link == Link::dataset) names.push_back(v.name);
    std::sort(names.begin(), names.end(), natural_less);
    const std::size_t part = into.part.empty() ? 0 : into.part.back() + 1;
    for (const std::string& v : names) {
      into.datasets.push_back(path + "vars/" + v);
      into.part.push_back(part);
    }
  }
  std::sort(kids.begin(), kids.end(), [](const Child& a, const Child& b) { return attribute_less(a.name, b.name); });
  for (const Child& c : kids) {
    if (c.link != Link::group || c.name == "vars" || std::find(skip.begin(), skip.end(), c.name) != skip.end())
      continue;
    h5::Handle sub = open_group(group, c.name, path + c.name, file);
    walk_object(sub.get(), path + c.name + "/", file, into, {}, depth + 1);
  }
}

// Returns the class part of a Keras 3 container name: "dense_2" -> "dense", "conv2d" -> "conv2d".
std::string kind_of_group(const std::string& name) {
  const std::size_t us = name.rfind('_');
  if (us == std::string::npos || us + 1 == name.size()) return name;
  for (std::size_t i = us + 1; i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return name;
  return name.substr(0, us);
}

}  // namespace

std::optional<std::vector<std::string>> read_names(hid_t object, const std::string& name, const std::string& file) {
  if (auto whole = h5::read_string_list(object, name.c_str(), file)) return whole;
  std::optional<std::vector<std::string>> joined;
  for (int chunk = 0;; ++chunk) {
    auto part = h5::read_string_list(object, (name + std::to_string(chunk)).c_str(), file);
    if (!part) break;
    if (!joined) joined.emplace();
    joined->insert(joined->end(), part->begin(), part->end());
  }
  return joined;
}

std::vector<std::string> listed_weights(hid_t group, const std::string& prefix, const std::vector<std::string>& names,
                                        const std::string& owner, const std::string& file) {
  std::vector<std::string> out;
  for (const std::string& w : names) {
    if (!w.empty()) h5::check_links(group, w, file, prefix);
    // H5Lexists checks one link at a time, so walk the intermediate groups of "dense/kernel:0".
    bool found = !w.empty();
    for (std::size_t start = 0; found && start <= w.size();) {
      const std::size_t slash = w.find('/', start);
      found = H5Lexists(group, w.substr(0, slash).c_str(), H5P_DEFAULT) > 0;
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    H5Eclear2(H5E_DEFAULT);
    if (!found) fail(file, owner + " lists weight " + w + " but there is no dataset " + prefix + w);
    out.push_back(prefix + w);
  }
  return out;
}

FoundModel walk_keras2(hid_t group, const std::string& prefix, const std::string& file) {
  FoundModel model;
  const auto layers = read_names(group, "layer_names", file);
  WAVG_ASSERT(layers);  // the caller found the attribute
  for (const std::string& layer : *layers) {
    h5::check_links(group, layer, file, prefix);
    if (H5Lexists(group, layer.c_str(), H5P_DEFAULT) <= 0)
      fail(file, "layer_names lists " + layer + " but there is no group " + prefix + layer);
    h5::Handle g = open_group(group, layer, prefix + layer, file);
    auto names = read_names(g.get(), "weight_names", file);
    if (!names) fail(file, "layer group " + prefix + layer + " has no weight_names attribute");
    FoundLayer found{
        prefix + layer, "", listed_weights(g.get(), prefix + layer + "/", *names, prefix + layer, file), {}};
    found.part.assign(found.datasets.size(), 0);  // Keras 2 lists a layer's weights in its own order
    model.layers.push_back(std::move(found));
  }
  return model;
}

FoundModel walk_keras3(hid_t root, const std::string& file) {
  FoundModel model;
  model.order = LayerOrder::per_kind;
  if (h5::exists(H5Lexists(root, "layers", H5P_DEFAULT), file, "cannot look for layers")) {
    h5::Handle layers = open_group(root, "layers", "layers", file);
    std::vector<Child> kids = children(layers.get(), "layers/", file);
    std::sort(kids.begin(), kids.end(), [](const Child& a, const Child& b) { return natural_less(a.name, b.name); });
    for (const Child& c : kids) {
      if (c.link != Link::group) continue;
      FoundLayer layer{"layers/" + c.name, kind_of_group(c.name), {}, {}};
      h5::Handle g = open_group(layers.get(), c.name, layer.group, file);
      walk_object(g.get(), layer.group + "/", file, layer);
      model.layers.push_back(std::move(layer));
    }
  }
  H5Eclear2(H5E_DEFAULT);
  // The model's other attributes (optimizer/, ...), then its own vars/ (Keras writes them first, but wavg has
  // always listed them last, and outputs keep that order).
  FoundLayer rest;
  walk_object(root, "", file, rest, {"layers"});
  std::vector<std::string> own;
  for (std::string& d : rest.datasets) (d.rfind("vars/", 0) == 0 ? own : model.other).push_back(std::move(d));
  model.other.insert(model.other.end(), own.begin(), own.end());
  // Layers of a single class are numbered in model order: the whole order is known.
  const FoundLayer* first = nullptr;
  bool one_kind = true;
  for (const FoundLayer& l : model.layers) {
    if (l.datasets.empty()) continue;
    if (!first) first = &l;
    one_kind = one_kind && l.kind == first->kind;
  }
  if (one_kind) model.order = LayerOrder::model;
  return model;
}

std::optional<std::vector<ConfigLayer>> config_layers(std::string_view json) {
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, false);
  if (!doc.is_object() || !doc.contains("config")) return std::nullopt;
  const nlohmann::json& config = doc["config"];
  const nlohmann::json* list = config.is_array() ? &config : nullptr;
  if (config.is_object() && config.contains("layers") && config["layers"].is_array()) list = &config["layers"];
  if (!list) return std::nullopt;
  std::vector<ConfigLayer> out;
  for (const nlohmann::json& l : *list) {
    if (!l.is_object() || !l.contains("class_name") || !l["class_name"].is_string()) return std::nullopt;
    ConfigLayer layer{"", snake_case(l["class_name"].get<std::string>())};
    if (l.contains("config") && l["config"].is_object() && l["config"].contains("name") &&
        l["config"]["name"].is_string())
      layer.name = l["config"]["name"].get<std::string>();
    else if (l.contains("name") && l["name"].is_string())
      layer.name = l["name"].get<std::string>();
    out.push_back(std::move(layer));
  }
  return out;
}

void set_keras2_kinds(ModelLayers& layers, const std::string& prefix, const std::vector<ConfigLayer>& config) {
  std::map<std::string, std::string> kind_of;
  for (const ConfigLayer& c : config) kind_of[prefix + c.name] = c.kind;
  for (LayerInfo& l : layers.layers)
    if (auto it = kind_of.find(l.name); it != kind_of.end()) l.kind = it->second;
}

void order_keras3_layers(ModelLayers& layers, const std::vector<ConfigLayer>& config) {
  // saving_lib names the objects of the layers list by class, numbering repeats in list order.
  std::map<std::string, std::size_t> used;
  std::vector<LayerInfo> ordered;
  std::vector<bool> taken(layers.layers.size(), false);
  for (const ConfigLayer& c : config) {
    const std::size_t n = used[c.kind]++;
    std::string group = "layers/";
    group += c.kind;
    if (n > 0) group += '_' + std::to_string(n);
    for (std::size_t i = 0; i < layers.layers.size(); ++i)
      if (!taken[i] && layers.layers[i].name == group) {
        taken[i] = true;
        ordered.push_back(layers.layers[i]);
      }
  }
  for (std::size_t i = 0; i < layers.layers.size(); ++i)
    if (!taken[i] && !layers.layers[i].tensors.empty()) return;  // the config does not describe this file
  layers.layers = std::move(ordered);
  layers.order = LayerOrder::model;
}

std::string snake_case(std::string_view class_name) {
  static const std::regex non_word(R"(\W+)"), word_start("(.)([A-Z][a-z]+)"), lower_upper("([a-z])([A-Z])");
  std::string s = std::regex_replace(std::string(class_name), non_word, "");
  s = std::regex_replace(s, word_start, "$1_$2");
  s = std::regex_replace(s, lower_upper, "$1_$2");
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace wavg::keras
