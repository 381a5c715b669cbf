// Per-tensor parameter values (tensor_values.hpp): mergekit's evaluate_setting and layer positions.

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

std::optional<double> TensorValues::get(const std::string& name, const std::string& tensor, double t,
                                        std::optional<std::size_t> input) const {
  if (input && *input < per_input.size())
    if (const auto it = per_input[*input].find(name); it != per_input[*input].end())
      if (const auto v = evaluate_setting(it->second, tensor, t)) return v;
  if (const auto it = global.find(name); it != global.end())
    if (const auto v = evaluate_setting(it->second, tensor, t)) return v;
  if (required.count(name))
    throw Error(ExitCode::usage, source,
                "no " + name + " for tensor " + tensor + (input ? " of models[" + std::to_string(*input) + "]" : "") +
                    ": no setting's filter matches it and " + name + " has no default (give one without a filter)");
  return std::nullopt;
}

bool TensorValues::names(const std::string& name) const {
  if (global.count(name)) return true;
  return std::any_of(per_input.begin(), per_input.end(), [&](const auto& m) { return m.count(name) > 0; });
}

std::vector<double> layer_positions(const std::vector<std::string>& names) {
  static const std::regex k_layer(R"((?:^|\.)(?:layers|h|blocks|layer)\.(\d+)\.)");
  std::vector<long> layer(names.size(), -1);
  long last = -1;
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::smatch m;
    if (!std::regex_search(names[i], m, k_layer) || m[1].length() > 6) continue;
    layer[i] = std::stol(m[1].str());
    last = std::max(last, layer[i]);
  }
  std::vector<double> t(names.size(), 0.0);
  for (std::size_t i = 0; i < names.size(); ++i)
    if (layer[i] >= 0) t[i] = last > 0 ? static_cast<double>(layer[i]) / static_cast<double>(last) : 1.0;
  return t;
}

}  // namespace wavg
