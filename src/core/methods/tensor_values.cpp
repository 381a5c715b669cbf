// Per-tensor parameter values (tensor_values.hpp): mergekit's evaluate_setting, layer positions, and a sliced
// merge's settings per output slice.

#include "wavg/tensor_values.hpp"

#include <algorithm>
#include <regex>

#include "wavg/error.hpp"

namespace wavg {

std::optional<double> evaluate_setting(const ParamSetting& setting, const std::string& tensor, double t) {
  for (const ParamCondition& c : setting) {
    if (!c.filter.empty() && c.filter != "*" && tensor.find(c.filter) == std::string::npos) continue;
    if (c.values.empty()) return std::nullopt;
    if (c.values.size() == 1) return c.values.front();
    // mergekit: scaled = t (n - 1), i0 = int(scaled), i1 = min(n - 1, i0 + 1), (1 - frac) v[i0] + frac v[i1].
    const double scaled = t * static_cast<double>(c.values.size() - 1);
    const auto i0 = static_cast<std::size_t>(scaled);
    const std::size_t i1 = std::min(c.values.size() - 1, i0 + 1);
    const double frac = scaled - static_cast<double>(i0);
    return (1 - frac) * c.values[i0] + frac * c.values[i1];
  }
  return std::nullopt;
}

namespace {

// Where an output tensor of a sliced merge lies: its slice, its layer position t there, and the layer's index in
// the slice (with the name split around it; nothing outside the layers).
struct SlicePlace {
  std::size_t slice = 0;
  double t = 0;
  long index = 0;
  std::optional<LayerName> name;
};

SlicePlace slice_place(const std::vector<SliceValues>& slices, const std::string& tensor) {
  SlicePlace p;
  p.name = layer_name(tensor);
  if (p.name) {
    long start = 0;
    for (std::size_t i = 0; i < slices.size(); start += slices[i].layers, ++i)
      if (p.name->layer < start + slices[i].layers) {
        const long n = slices[i].layers;
        p.slice = i;
        p.index = p.name->layer - start;
        p.t = n > 1 ? static_cast<double>(p.index) / static_cast<double>(n - 1) : 1.0;
        return p;
      }
  }
  p.name.reset();  // outside the layers (or past them, which a sliced model does not name)
  p.slice = before_layers(tensor) ? 0 : slices.size() - 1;
  return p;
}

}  // namespace

std::optional<double> TensorValues::get(const std::string& name, const std::string& tensor, double t,
                                        std::optional<std::size_t> input) const {
  const std::map<std::string, ParamSetting>* levels[3] = {nullptr, nullptr, &global};
  std::string own = tensor;  // the name the filters see: a source's own for a per-model value (mergekit's cfg_m)
  if (input && *input < per_input.size()) levels[0] = &per_input[*input];
  if (!slices.empty()) {
    const SlicePlace p = slice_place(slices, tensor);
    const SliceValues& s = slices[p.slice];
    t = p.t;
    levels[0] = input && *input < s.per_input.size() ? &s.per_input[*input] : nullptr;
    levels[1] = &s.global;
    if (input && p.name && *input < s.first.size())
      own = p.name->prefix + std::to_string(s.first[*input] + p.index) + p.name->suffix;
  }
  for (const auto* level : levels)
    if (level)
      if (const auto it = level->find(name); it != level->end())
        if (const auto v = evaluate_setting(it->second, own, t)) return v;
  if (required.count(name))
    throw Error(ExitCode::usage, source,
                "no " + name + " for tensor " + tensor + (input ? " of models[" + std::to_string(*input) + "]" : "") +
                    ": no setting's filter matches it and " + name + " has no default (give one without a filter)");
  return std::nullopt;
}

bool TensorValues::names(const std::string& name) const {
  const auto in = [&](const std::vector<std::map<std::string, ParamSetting>>& maps) {
    return std::any_of(maps.begin(), maps.end(), [&](const auto& m) { return m.count(name) > 0; });
  };
  return global.count(name) || in(per_input) ||
         std::any_of(slices.begin(), slices.end(), [&](const SliceValues& s) {
           return s.global.count(name) || in(s.per_input);
         });
}

std::optional<LayerName> layer_name(const std::string& name) {
  static const std::regex k_layer(R"(^(.*?(?:^|\.)(?:layers|h|blocks|layer)\.)(\d{1,6})(\..*)$)");
  std::smatch m;
  if (!std::regex_match(name, m, k_layer)) return std::nullopt;
  return LayerName{m[1].str(), std::stol(m[2].str()), m[3].str()};
}

bool before_layers(const std::string& name) {
  return name.find("embed") != std::string::npos || name.find("wte") != std::string::npos ||
         name.find("wpe") != std::string::npos;
}

std::vector<double> layer_positions(const std::vector<std::string>& names) {
  std::vector<long> layer(names.size(), -1);
  long last = -1;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (const auto n = layer_name(names[i])) layer[i] = n->layer;
    last = std::max(last, layer[i]);
  }
  std::vector<double> t(names.size(), 0.0);
  for (std::size_t i = 0; i < names.size(); ++i)
    if (layer[i] >= 0) t[i] = last > 0 ? static_cast<double>(layer[i]) / static_cast<double>(last) : 1.0;
  return t;
}

}  // namespace wavg
