// Which tensors share a permutation. From a Keras model config (the `model_config` root attribute of a Keras 2
// .h5, which wavg local-sgd also writes): the layer graph is walked in order, each tensor flowing between layers
// carrying the group of units that permutes its last axis. A Dense or Conv layer starts a new group (its units);
// its kernel is permuted on the output axis by that group and on the input axis by the incoming one; its bias,
// and BatchNormalization's four vectors, follow their layer's group; Add joins its inputs' groups (union-find);
// Flatten marks the flow so the next Dense kernel's input axis repeats the channel permutation over the spatial
// positions; a group that reaches the model's input or output is no permutation at all. Anything else with
// weights, or not known to act on each unit alike, is refused: guessing would silently change what the network
// computes.
//
// Tensors are found by name: the last path component that is a variable name (kernel, bias, gamma, beta,
// moving_mean, moving_variance) under the nearest component naming a layer. When it is the last component the
// tensor is a parameter (model_weights/dense/dense/kernel:0, dense/kernel); when more follow it is an optimizer
// slot that moves with it (optimizer_weights/Adam/dense/kernel/m:0). Keras 3 files (a .keras archive's
// model.weights.h5, with config.json as the model config) name them layers/K/vars/I instead: K is the layer's class
// in snake case numbered in model order (dense, dense_1, ...; formats/hdf5/keras_layout.hpp), I its variable in
// creation order
// (Dense and Conv: kernel, bias; BatchNormalization: gamma, beta, moving_mean, moving_variance, each when used).
// Keras 3 optimizer variables (optimizer/vars/I) say nothing of the variable they follow, so they are refused.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "align/spec_file.hpp"
#include "align/state_dict_spec.hpp"
#include "wavg/align.hpp"
#include "wavg/error.hpp"

namespace wavg::align {

bool TensorPerm::permuted() const {
  for (const AxisPerm& a : axes)
    if (a.group >= 0) return true;
  return false;
}

namespace {

using nlohmann::json;

const json k_null;
const json k_empty = json::object();
const json k_last_axis = -1;

// Returns `object[key]`, or null when `object` is not an object or lacks the key: a reference, never a copy.
const json& member(const json& object, const char* key) {
  if (!object.is_object()) return k_null;
  const auto it = object.find(key);
  return it == object.end() ? k_null : *it;
}

constexpr std::uint64_t k_max_group = 1 << 16;  // 65536 units: 32 GiB of scores

// A flow of activations between layers: the union-find node of the group permuting its last axis (0: none), and
// whether a Flatten folded spatial positions into it.
struct Flow {
  int node = 0;
  bool flat = false;
};

// One weight of a layer: a kernel (last axis `out`, the one before it `in`) or a vector (its only axis `out`).
struct Var {
  std::optional<Flow> in;
  Flow out;
};

class Graph {
 public:
  explicit Graph(std::string file) : m_file(std::move(file)) {}

  void walk(const json& config) {
    const std::string kind = config.value("class_name", "");
    // References only, never copies: copying a JSON value recurses as deep as it nests, and the file chooses that.
    const json& body = config.contains("config") ? config["config"] : k_null;
    const json& layers = body.is_array() ? body : body.is_object() && body.contains("layers") ? body["layers"] : k_null;
    if (!layers.is_array()) refuse("the model config lists no layers");
    if (kind == "Sequential")
      walk_sequential(layers);
    else if (kind == "Functional" || kind == "Model")
      walk_functional(body, layers);
    else
      refuse("the model config is a " + kind + ", not a Sequential or Functional model");
  }

  // Resolves the graph into a spec for `reader`'s tensors.
  PermSpec resolve(const Reader& reader) {
    PermSpec spec;
    spec.source = "Keras model_config";
    std::map<int, int> group_of;
    auto group = [&](int node) {
      const int root = find(node);
      if (root == find(0)) return -1;
      auto [it, fresh] = group_of.emplace(root, static_cast<int>(spec.group_names.size()));
      if (fresh) {
        spec.group_names.push_back(m_node_layer[static_cast<std::size_t>(root)]);
        spec.group_sizes.push_back(m_size[static_cast<std::size_t>(root)]);
      }
      return it->second;
    };
    std::set<std::pair<std::string, std::string>> found;
    std::vector<Problem> problems;
    for (const TensorInfo& t : reader.tensors()) {
      TensorPerm tp;
      const auto owner = owner_of(t.name, tp.role);
      if (!owner) {
        if (t.shape.empty() || !is_float(t.dtype)) {
          spec.tensors.push_back(tp);
          continue;
        }
        refuse(t.name + ": no layer of the model config owns this tensor");
      }
      const Var& var = m_vars.at(owner->first).at(owner->second);
      if (tp.role == Role::parameter) found.insert(*owner);
      tp.axes.resize(t.shape.size());
      const std::size_t rank = t.shape.size();
      auto place = [&](std::size_t axis, Flow f) {
        const int g = group(f.node);
        if (g < 0) return;
        const std::uint64_t n = spec.group_sizes[static_cast<std::size_t>(g)];
        const std::uint64_t len = t.shape[axis];
        if (f.flat ? (n == 0 || len % n != 0) : len != n) {
          problems.push_back({reader.path(), t.name + ": axis " + std::to_string(axis) + " has " + std::to_string(len) +
                                                 " entries, the model config gives " +
                                                 (f.flat ? "a multiple of " : "") + std::to_string(n)});
          return;
        }
        tp.axes[axis] = {g, f.flat ? len / n : 1};
      };
      if (var.in ? rank < 2 : rank != 1) {
        problems.push_back({reader.path(), t.name + ": shape " + shape_string(t.shape) + " does not fit a " +
                                               (var.in ? "kernel" : "vector")});
      } else {
        place(rank - 1, var.out);
        if (var.in) place(rank - 2, *var.in);
      }
      if (tp.permuted() && !is_float(t.dtype))
        problems.push_back({reader.path(), t.name + ": a permuted tensor must be floating-point"});
      spec.tensors.push_back(tp);
    }
    if (!problems.empty()) throw Error(ExitCode::incompatible, std::move(problems));
    for (const auto& [layer, vars] : m_vars)
      for (const auto& [name, var] : vars)
        if (!found.count({layer, name}) && (group(var.out.node) >= 0 || (var.in && group(var.in->node) >= 0)))
          refuse(layer + "/" + name + ": the model config has it but the file holds no such tensor");
    return spec;
  }

 private:
  [[noreturn]] void refuse(const std::string& what) const {
    throw Error(ExitCode::usage, m_file, "cannot infer the permutation spec: " + what + " (give --perm-spec)");
  }

  int new_node(const std::string& layer, std::uint64_t size) {
    m_parent.push_back(static_cast<int>(m_parent.size()));
    m_size.push_back(size);
    m_node_layer.push_back(layer);
    return m_parent.back();
  }
  int find(int x) {
    while (m_parent[static_cast<std::size_t>(x)] != x) x = m_parent[static_cast<std::size_t>(x)];
    return x;
  }
  void join(int a, int b, const std::string& layer) {
    a = find(a), b = find(b);
    if (a == b) return;
    const int fixed = find(0);
    if (a != fixed && b != fixed && m_size[static_cast<std::size_t>(a)] != m_size[static_cast<std::size_t>(b)])
      refuse(layer + " adds tensors of " + std::to_string(m_size[static_cast<std::size_t>(a)]) + " and " +
             std::to_string(m_size[static_cast<std::size_t>(b)]) + " units");
    if (b < a) std::swap(a, b);
    m_parent[static_cast<std::size_t>(b)] = a;  // the earlier node (the fixed node 0 first of all) stays the root
  }

  static std::string layer_name(const json& layer) {
    if (layer.contains("name") && layer["name"].is_string()) return layer["name"];
    const json& c = member(layer, "config");
    return c.is_object() && c.contains("name") && c["name"].is_string() ? c["name"].get<std::string>() : "";
  }

  static std::uint64_t positive(const json& c, const char* key) {
    if (!c.contains(key) || !c[key].is_number_unsigned() || c[key].get<std::uint64_t>() == 0) return 0;
    return c[key].get<std::uint64_t>();
  }

  void add_var(const std::string& layer, const std::string& var, Var v) {
    m_vars[layer][var] = std::move(v);
    m_var_order[layer].push_back(var);
  }

  // Applies one layer to its input flows and returns its output flow.
  Flow apply(const json& layer, const std::vector<Flow>& in) {
    const std::string kind = layer.value("class_name", "");
    const std::string name = layer_name(layer);
    if (name.empty()) refuse("a " + kind + " layer has no name");
    // Keras 3 names the layer's group by its class, numbered in model order: the n-th Dense is dense_n.
    const std::string key = squashed(kind);
    m_keras3_group[{key, m_kind_count[key]++}] = name;
    const json& c = member(layer, "config").is_object() ? member(layer, "config") : k_empty;
    static const std::set<std::string> k_elementwise{"Activation",
                                                     "ReLU",
                                                     "LeakyReLU",
                                                     "ELU",
                                                     "Softmax",
                                                     "Dropout",
                                                     "SpatialDropout1D",
                                                     "SpatialDropout2D",
                                                     "GaussianNoise",
                                                     "GaussianDropout",
                                                     "AlphaDropout",
                                                     "ActivityRegularization",
                                                     "MaxPooling1D",
                                                     "MaxPooling2D",
                                                     "MaxPooling3D",
                                                     "AveragePooling1D",
                                                     "AveragePooling2D",
                                                     "AveragePooling3D",
                                                     "GlobalAveragePooling1D",
                                                     "GlobalAveragePooling2D",
                                                     "GlobalAveragePooling3D",
                                                     "GlobalMaxPooling1D",
                                                     "GlobalMaxPooling2D",
                                                     "GlobalMaxPooling3D",
                                                     "ZeroPadding1D",
                                                     "ZeroPadding2D",
                                                     "ZeroPadding3D"};
    if (kind == "InputLayer") return {0, false};
    if (in.size() != 1 && kind != "Add")
      refuse(name + " (" + kind + ") takes " + std::to_string(in.size()) + " inputs");
    if (c.value("data_format", "channels_last") != "channels_last")
      refuse(name + " (" + kind + ") is not channels_last");
    if (kind == "Dense" || kind == "Conv1D" || kind == "Conv2D" || kind == "Conv3D") {
      const std::uint64_t units = positive(c, kind == "Dense" ? "units" : "filters");
      if (units == 0) refuse(name + " (" + kind + ") has no unit count");
      if (kind != "Dense" && (in[0].flat || c.value("groups", 1) != 1))
        refuse(name + " (" + kind + ") is grouped or follows a Flatten");
      const Flow out{new_node(name, units), false};
      add_var(name, "kernel", {in[0], out});
      if (c.value("use_bias", true)) add_var(name, "bias", {std::nullopt, out});
      return out;
    }
    if (kind == "BatchNormalization") {
      const json& axis = c.contains("axis") ? c["axis"] : k_last_axis;
      const bool last = axis == json(-1) || axis == json::array({-1}) || (axis.is_array() && axis.size() == 1) ||
                        axis.is_number_integer();
      if (!last || in[0].flat) refuse(name + " (BatchNormalization) does not normalise the channel axis");
      if (c.value("scale", true)) add_var(name, "gamma", {std::nullopt, in[0]});
      if (c.value("center", true)) add_var(name, "beta", {std::nullopt, in[0]});
      for (const char* v : {"moving_mean", "moving_variance"}) add_var(name, v, {std::nullopt, in[0]});
      return in[0];
    }
    if (kind == "Add") {
      if (in.empty()) refuse(name + " (Add) has no inputs");
      for (const Flow& f : in) {
        if (f.flat != in[0].flat) refuse(name + " (Add) adds flattened and unflattened tensors");
        join(in[0].node, f.node, name);
      }
      return in[0];
    }
    if (kind == "Flatten") return {in[0].node, find(in[0].node) != find(0)};
    if (k_elementwise.count(kind)) {
      if (in[0].flat && kind.find("Pool") != std::string::npos) refuse(name + " (" + kind + ") follows a Flatten");
      return {in[0].node, in[0].flat && kind.find("Global") == std::string::npos};
    }
    refuse("layer " + name + " (" + kind +
           ") is not supported (Dense, Conv, BatchNormalization, Add, Flatten and "
           "element-wise layers are)");
  }

  void walk_sequential(const json& layers) {
    Flow flow{0, false};
    for (const json& layer : layers) {
      if (!layer.is_object()) refuse("a layer is not a JSON object");
      flow = apply(layer, {flow});
    }
    join(0, flow.node, "the output");
  }

  // Collects the layer names a node's arguments come from (Keras 2 lists, Keras 3 keras_history objects). A hostile
  // file could nest these without end: past k_max_depth it is refused, not followed.
  void histories(const json& j, std::vector<std::string>& out, int depth = 0) const {
    if (depth > k_max_depth) refuse("the model config nests inbound nodes deeper than " + std::to_string(k_max_depth));
    if (j.is_object()) {
      if (j.contains("keras_history") && j["keras_history"].is_array() && !j["keras_history"].empty() &&
          j["keras_history"][0].is_string()) {
        out.push_back(j["keras_history"][0]);
        return;
      }
      for (const auto& [k, v] : j.items()) histories(v, out, depth + 1);
    } else if (j.is_array()) {
      if (!j.empty() && j[0].is_string() && j.size() >= 3 && j[1].is_number()) {
        out.push_back(j[0]);  // Keras 2: ["layer", node, tensor, {kwargs}]
        return;
      }
      for (const json& v : j) histories(v, out, depth + 1);
    }
  }

  void walk_functional(const json& body, const json& layers) {
    std::map<std::string, Flow> out;
    for (const json& layer : layers) {
      if (!layer.is_object()) refuse("a layer is not a JSON object");
      const std::string name = layer_name(layer);
      const json& nodes = member(layer, "inbound_nodes");
      if (!nodes.is_null() && (!nodes.is_array() || nodes.size() > 1))
        refuse("layer " + name + " is called more than once");
      std::vector<std::string> from;
      if (nodes.is_array() && !nodes.empty()) {
        const json& node = nodes[0];
        histories(node.is_object() && node.contains("args") ? node["args"] : node, from);
      }
      std::vector<Flow> in;
      for (const std::string& f : from) {
        auto it = out.find(f);
        if (it == out.end())
          refuse("layer " + name + " takes the output of " + f + ", which comes later or not at all");
        in.push_back(it->second);
      }
      if (from.empty() && layer.value("class_name", "") != "InputLayer") refuse("layer " + name + " has no inputs");
      if (!out.emplace(name, apply(layer, in)).second) refuse("two layers are named " + name);
    }
    std::vector<std::string> outputs;
    histories(member(body, "output_layers"), outputs);
    if (outputs.empty()) refuse("the model config names no output layers");
    for (const std::string& o : outputs) {
      auto it = out.find(o);
      if (it == out.end()) refuse("output layer " + o + " is not in the model");
      join(0, it->second.node, o);
    }
  }

  // Finds the (layer, variable) a tensor belongs to, and whether it is the parameter or an optimizer slot of it.
  std::optional<std::pair<std::string, std::string>> owner_of(const std::string& name, Role& role) const {
    if (auto keras3 = keras3_owner(name)) {
      role = Role::parameter;
      return keras3;
    }
    std::vector<std::string> parts;
    for (std::size_t start = 0;;) {
      const std::size_t slash = name.find('/', start);
      std::string part = name.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
      const std::size_t colon = part.rfind(':');
      if (colon != std::string::npos && colon + 1 < part.size() &&
          part.find_first_not_of("0123456789", colon + 1) == std::string::npos)
        part.resize(colon);
      parts.push_back(part);
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    for (std::size_t k = parts.size(); k-- > 1;) {
      for (std::size_t m = k; m-- > 0;) {
        auto layer = m_vars.find(parts[m]);
        if (layer == m_vars.end()) continue;
        if (!layer->second.count(parts[k])) break;
        role = k + 1 == parts.size() ? Role::parameter : Role::slot;
        return std::make_pair(parts[m], parts[k]);
      }
    }
    for (const std::string& p : parts)
      if (m_vars.count(p)) refuse(name + ": a tensor of layer " + p + " that is none of its known variables");
    return std::nullopt;
  }

  // Returns a class or group name in lower case without underscores and other non-alphanumerics: Keras's snake
  // case of a class (BatchNormalization -> batch_normalization) squashes to the class's own squashed name, so the
  // align layer needs no copy of Keras's naming rules (the codec's keras_layout.cpp has them).
  static std::string squashed(const std::string& s) {
    std::string out;
    for (const char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (std::isalnum(u)) out += static_cast<char>(std::tolower(u));
    }
    return out;
  }

  // Finds the (layer, variable) of a Keras 3 name, layers/K/vars/I, K being the class's group (dense) or its
  // n-th repeat (dense_n).
  std::optional<std::pair<std::string, std::string>> keras3_owner(const std::string& name) const {
    const std::size_t vars = name.find("/vars/");
    if (name.rfind("layers/", 0) != 0 || vars == std::string::npos) return std::nullopt;
    std::string k = name.substr(7, vars - 7);
    std::size_t repeat = 0;
    const std::size_t us = k.rfind('_');
    if (us != std::string::npos && us + 1 < k.size() && k.size() - us <= 6 &&
        k.find_first_not_of("0123456789", us + 1) == std::string::npos) {
      repeat = std::stoul(k.substr(us + 1));
      k.resize(us);
    }
    const auto group = m_keras3_group.find({squashed(k), repeat});
    if (group == m_keras3_group.end()) return std::nullopt;
    const std::string index = name.substr(vars + 6);
    const auto order = m_var_order.find(group->second);
    if (index.empty() || index.size() > 4 || index.find_first_not_of("0123456789") != std::string::npos ||
        order == m_var_order.end() || std::stoul(index) >= order->second.size())
      refuse(name + ": a variable of layer " + group->second + " that is none of its known variables");
    return std::make_pair(group->second, order->second[std::stoul(index)]);
  }

  static constexpr int k_max_depth = 32;
  std::string m_file;
  std::vector<int> m_parent{0};
  std::vector<std::uint64_t> m_size{0};
  std::vector<std::string> m_node_layer{""};
  std::map<std::string, std::map<std::string, Var>> m_vars;
  std::map<std::string, std::vector<std::string>> m_var_order;  // per layer, its variables in creation order
  std::map<std::string, std::size_t> m_kind_count;              // layers seen per class (squashed)
  std::map<std::pair<std::string, std::size_t>, std::string> m_keras3_group;  // ("dense", 1) -> the layer's name
};

// Refuses groups too wide to match: the scores of a group of n units are an n x n matrix of doubles.
PermSpec checked(PermSpec spec, const std::string& file) {
  for (std::size_t g = 0; g < spec.group_sizes.size(); ++g)
    if (spec.group_sizes[g] > k_max_group)
      fail(file, "permutation group " + spec.group_names[g] + " has " + std::to_string(spec.group_sizes[g]) +
                     " units; weight matching handles at most " + std::to_string(k_max_group));
  return spec;
}

}  // namespace

PermSpec make_spec(const Reader& reader, const SpecSource& source) {
  if (!source.file.empty()) return checked(read_spec_file(reader, source.file), source.file);
  const std::string text = reader.model_config();
  if (text.empty() && is_state_dict_format(reader)) {
    // Inferring anyway would align a residual model wrongly and still exit 0: the worst kind of failure.
    if (!source.assume_sequential)
      throw Error(ExitCode::usage, reader.path(),
                  "a state_dict does not show how its layers connect: give --assume-sequential if the model is a "
                  "plain chain of its modules, or --perm-spec");
    return checked(state_dict_spec(reader), reader.path());
  }
  if (text.empty())
    throw Error(ExitCode::usage, reader.path(),
                "cannot infer the permutation spec: the file holds no Keras model_config (give --perm-spec)");
  json config;
  try {
    config = json::parse(text);
  } catch (const json::exception&) {
    fail(reader.path(), "model_config is not JSON");
  }
  if (!config.is_object()) fail(reader.path(), "model_config is not a JSON object");
  Graph graph(reader.path());
  try {
    graph.walk(config);
  } catch (const json::exception& e) {
    throw Error(ExitCode::usage, reader.path(),
                std::string("cannot infer the permutation spec: unexpected model_config (") + e.what() + ")");
  }
  return checked(graph.resolve(reader), reader.path());
}

}  // namespace wavg::align
