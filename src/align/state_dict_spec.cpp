// Which tensors share a permutation, from a PyTorch state_dict's names and shapes. A state_dict holds no
// architecture, only MODULE.PARAM names (fc1.weight, features.0.bias, bn1.running_mean) in the order the modules
// were registered, so this accepts only what names and shapes pin down, and refuses the rest naming the tensor:
//
// - Every floating-point tensor of rank >= 1 belongs to a Linear (weight [out, in]), a Conv (weight [out, in, k...])
//   or a BatchNorm (running_mean and running_var, with weight and bias when affine). A one-dimensional weight with
//   no running statistics could be a LayerNorm, a GroupNorm (which does not treat channels alike) or a BatchNorm
//   without tracked statistics: refused. Scalars and integer tensors (num_batches_tracked) are not permuted.
// - The modules form one chain: each is a top-level module (fc1) or a child of a top-level nn.Sequential
//   (layers.0, features.3, classifier.1), under an optional common prefix (model., module.). A module nested deeper
//   is a part of a block (ResNet's layer1.0.conv1), and how blocks connect (skip connections) is not in the file.
// - Order: a PyTorch file keeps the state_dict's order, which is the order the modules were registered in; an
//   nn.Sequential runs its children in that order. A safetensors file lists its tensors sorted by name, so the
//   order is taken from the numbers in the names, and only when the names differ in nothing else (layers.0 ..
//   layers.10, fc1 .. fc3); conv1, bn1, fc1 are refused there.
// - Shapes must chain: a layer's input width is the previous layer's output width, or a multiple of a Conv's
//   channels for the first Linear after Conv layers (a Flatten of channels x positions, channels first as PyTorch
//   flattens NCHW: the axis repeats each channel's permutation over `inner` positions); a BatchNorm has the
//   current width. A Conv after a Linear, a grouped Conv, or any mismatch is refused.
//
// Each Linear or Conv then owns a group of its output units: its weight's axis 0 and its bias, the input axis of
// the next layer's weight, and the BatchNorms between them. The first layer's input and the last layer's output
// are the model's, and are not permuted. What the names cannot show remains the user's to know: that the modules
// run in registration order with only element-wise layers, pooling, dropout and Flatten between them, no skip
// connections and no ConvTranspose. So make_spec calls this only when the user asserts it (--assume-sequential);
// --perm-spec describes anything else.

#include "align/state_dict_spec.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "wavg/error.hpp"

namespace wavg::align {

namespace {

enum class Kind { linear, conv, norm };

struct Module {
  std::string path;                           // "features.0"
  std::vector<std::string> parts;             // its dot-separated components
  std::map<std::string, std::size_t> params;  // parameter name -> tensor index
  std::string first;                          // its first tensor's name, for messages
  Kind kind = Kind::linear;
  std::uint64_t out = 0, in = 0;  // output and input width (a BatchNorm: out only)
};

[[noreturn]] void refuse(const Reader& reader, const std::string& what) {
  throw Error(ExitCode::usage, reader.path(), "cannot infer the permutation spec: " + what + " (give --perm-spec)");
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t dot = s.find('.', start);
    parts.push_back(s.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

bool is_number(const std::string& s) {
  return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
}

// Groups the tensors by module, in order of first appearance, and classifies each module by its parameters.
std::vector<Module> find_modules(const Reader& reader) {
  std::vector<Module> modules;
  std::map<std::string, std::size_t> index;
  const auto& tensors = reader.tensors();
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const TensorInfo& t = tensors[i];
    if (t.shape.empty() || !is_float(t.dtype)) continue;  // num_batches_tracked, step counters: nothing per unit
    const std::size_t dot = t.name.rfind('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == t.name.size())
      refuse(reader, t.name + ": not a MODULE.PARAMETER name of a state_dict");
    const std::string path = t.name.substr(0, dot);
    auto [it, fresh] = index.emplace(path, modules.size());
    if (fresh) modules.push_back({path, split(path), {}, t.name, Kind::linear, 0, 0});
    modules[it->second].params[t.name.substr(dot + 1)] = i;
  }
  for (Module& m : modules) {
    auto shape = [&](const char* p) -> const Shape& { return tensors[m.params.at(p)].shape; };
    auto tensor = [&](const std::string& p) { return m.path + "." + p; };
    for (const auto& [p, i] : m.params)
      if (p != "weight" && p != "bias" && p != "running_mean" && p != "running_var")
        refuse(reader, tensors[i].name +
                           ": not a parameter of a Linear, Conv or BatchNorm layer (weight, bias, "
                           "running_mean, running_var)");
    if (m.params.count("running_mean") || m.params.count("running_var")) {
      m.kind = Kind::norm;
      for (const char* p : {"running_mean", "running_var"})
        if (!m.params.count(p)) refuse(reader, tensor(p) + " is missing beside the other BatchNorm statistic");
      m.out = shape("running_mean")[0];
      for (const auto& [p, i] : m.params)
        if (tensors[i].shape != Shape{m.out})
          refuse(reader, tensors[i].name + ": shape " + shape_string(tensors[i].shape) + ", BatchNorm's statistics " +
                             "have " + shape_string({m.out}));
      continue;
    }
    if (!m.params.count("weight")) refuse(reader, tensor("bias") + ": a bias without a weight");
    const Shape& w = shape("weight");
    if (w.size() == 1)
      refuse(reader, tensor("weight") +
                         ": a one-dimensional weight without running statistics (LayerNorm, "
                         "GroupNorm and untracked BatchNorm cannot be told apart)");
    if (w.size() > 5) refuse(reader, tensor("weight") + ": a weight of rank " + std::to_string(w.size()));
    m.kind = w.size() == 2 ? Kind::linear : Kind::conv;
    m.out = w[0], m.in = w[1];
    if (m.params.count("bias") && shape("bias") != Shape{m.out})
      refuse(reader, tensor("bias") + ": shape " + shape_string(shape("bias")) + ", the weight has " +
                         std::to_string(m.out) + " outputs");
  }
  return modules;
}

// Refuses modules nested below a top-level module or nn.Sequential child, after the prefix all of them share.
void check_flat(const Reader& reader, const std::vector<Module>& modules) {
  std::size_t common = modules[0].parts.size() - 1;
  for (const Module& m : modules) {
    std::size_t k = 0;
    while (k < common && k + 1 < m.parts.size() && m.parts[k] == modules[0].parts[k]) ++k;
    common = k;
  }
  for (const Module& m : modules) {
    const std::size_t rest = m.parts.size() - common;
    if (rest > 2 || (rest == 2 && !is_number(m.parts.back())))
      refuse(reader, m.first +
                         ": a layer inside a block; a state_dict does not show how blocks connect (skip "
                         "connections)");
  }
}

// Returns the names' shape with every run of digits as '#', and the numbers in order.
std::pair<std::string, std::vector<std::uint64_t>> stem(const std::string& path) {
  std::pair<std::string, std::vector<std::uint64_t>> out;
  for (std::size_t k = 0; k < path.size();) {
    if (path[k] < '0' || path[k] > '9') {
      out.first += path[k++];
      continue;
    }
    std::uint64_t n = 0;
    for (; k < path.size() && path[k] >= '0' && path[k] <= '9'; ++k)
      n = std::min<std::uint64_t>(n * 10 + static_cast<std::uint64_t>(path[k] - '0'), 1ULL << 40);  // no overflow
    out.first += '#';
    out.second.push_back(n);
  }
  return out;
}

// Puts a safetensors file's modules in the order their numbers give, when their names differ in nothing else.
void order_by_numbers(const Reader& reader, std::vector<Module>& modules) {
  const std::string first = stem(modules[0].path).first;
  for (const Module& m : modules)
    if (stem(m.path).first != first)
      refuse(reader, "safetensors lists tensors sorted by name, and the names " + modules[0].path + " and " + m.path +
                         " do not say which layer comes first");
  std::stable_sort(modules.begin(), modules.end(),
                   [](const Module& a, const Module& b) { return stem(a.path).second < stem(b.path).second; });
}

}  // namespace

bool is_state_dict_format(const Reader& reader) {
  return reader.format() == FormatId::pytorch || reader.format() == FormatId::safetensors;
}

PermSpec state_dict_spec(const Reader& reader) {
  std::vector<Module> modules = find_modules(reader);
  if (modules.empty()) refuse(reader, "the file holds no floating-point tensors of a Linear, Conv or BatchNorm");
  check_flat(reader, modules);
  const bool sorted_names = reader.format() == FormatId::safetensors;
  if (sorted_names) order_by_numbers(reader, modules);

  const auto& tensors = reader.tensors();
  PermSpec spec;
  spec.source = sorted_names ? "safetensors state_dict names" : "PyTorch state_dict names";
  spec.tensors.resize(tensors.size());
  int group = -1;           // the group permuting the current width; -1: the model's input
  std::uint64_t width = 0;  // the current width (0 before the first layer)
  bool channels = false;    // the current flow is a Conv's channels (a Linear after it flattens them)
  const Module* last = nullptr;
  for (const Module& m : modules) {
    auto place = [&](const std::string& p, std::size_t axis, AxisPerm a) {
      if (!m.params.count(p)) return;
      TensorPerm& tp = spec.tensors[m.params.at(p)];
      tp.axes.resize(tensors[m.params.at(p)].shape.size());
      tp.axes[axis] = a;
    };
    if (m.kind == Kind::norm) {
      if (last && m.out != width)
        refuse(reader, m.path + ".running_mean: " + std::to_string(m.out) + " entries, the layer before (" +
                           last->path + ") gives " + std::to_string(width));
      for (const auto& [p, i] : m.params) place(p, 0, {group, 1, 1});
      continue;
    }
    std::uint64_t inner = 1;
    if (last) {
      if (m.kind == Kind::conv && !channels)
        refuse(reader, m.path + ".weight: a Conv after a Linear (" + last->path + ")");
      if (m.kind == Kind::linear && channels && m.in % width == 0) inner = m.in / width;
      if (m.in != width * inner)
        refuse(reader, m.path + ".weight: takes " + std::to_string(m.in) + " inputs, the layer before (" + last->path +
                           ") gives " + std::to_string(width) +
                           (m.kind == Kind::conv ? " channels (a grouped Conv?)" : ""));
    }
    place("weight", 1, {group, 1, inner});
    group = static_cast<int>(spec.group_names.size());
    spec.group_names.push_back(m.path);
    spec.group_sizes.push_back(m.out);
    place("weight", 0, {group, 1, 1});
    place("bias", 0, {group, 1, 1});
    width = m.out;
    channels = m.kind == Kind::conv;
    last = &m;
  }
  // The last layer's units are the model's output: not a permutation.
  if (group >= 0) {
    spec.group_names.pop_back();
    spec.group_sizes.pop_back();
    for (TensorPerm& tp : spec.tensors)
      for (AxisPerm& a : tp.axes)
        if (a.group == group) a = {};
  }
  for (TensorPerm& tp : spec.tensors)
    if (!tp.permuted()) tp.axes.clear();
  return spec;
}

}  // namespace wavg::align
