#include "align/spec_file.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>

#include "wavg/error.hpp"

namespace wavg::align {

using nlohmann::json;

PermSpec read_spec_file(const Reader& reader, const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(path, "cannot open");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    fail(path, std::string("not JSON: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("tensors") || !doc["tensors"].is_object())
    fail(path, "expected an object with \"tensors\": {NAME: [GROUP or null per axis]}");
  PermSpec spec;
  spec.source = path;
  spec.tensors.resize(reader.tensors().size());
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < reader.tensors().size(); ++i) index.emplace(reader.tensors()[i].name, i);
  std::map<std::string, int> groups;
  std::vector<Problem> problems;
  for (const char* section : {"tensors", "slots"}) {
    if (!doc.contains(section)) continue;
    if (!doc[section].is_object()) fail(path, std::string("\"") + section + "\" is not an object");
    for (const auto& [name, axes] : doc[section].items()) {
      auto it = index.find(name);
      if (it == index.end()) fail(path, name + ": no such tensor in " + reader.path());
      const TensorInfo& t = reader.tensors()[it->second];
      if (!axes.is_array() || axes.size() != t.shape.size())
        fail(path, name + ": expected a list of " + std::to_string(t.shape.size()) + " axes");
      TensorPerm& tp = spec.tensors[it->second];
      tp.role = std::string(section) == "slots" ? Role::slot : Role::parameter;
      for (std::size_t a = 0; a < axes.size(); ++a) {
        const json& axis = axes[a];
        if (axis.is_null()) {
          tp.axes.push_back({});
          continue;
        }
        static const json k_none;
        const json& g = !axis.is_object() ? axis : axis.contains("group") ? axis["group"] : k_none;  // no copies
        const std::uint64_t outer = axis.is_object() ? axis.value("outer", std::uint64_t{1}) : 1;
        const std::uint64_t inner = axis.is_object() ? axis.value("inner", std::uint64_t{1}) : 1;
        if (!g.is_string() || outer == 0 || inner == 0 || t.shape[a] % outer != 0 || (t.shape[a] / outer) % inner != 0)
          fail(path, name + ": axis " + std::to_string(a) +
                         " is not null, a group name or {\"group\", \"outer\", \"inner\"} dividing its length");
        const std::uint64_t units = t.shape[a] / outer / inner;
        auto [gi, fresh] = groups.emplace(g.get<std::string>(), static_cast<int>(spec.group_names.size()));
        if (fresh) {
          spec.group_names.push_back(g.get<std::string>());
          spec.group_sizes.push_back(units);
        }
        const std::uint64_t size = spec.group_sizes[static_cast<std::size_t>(gi->second)];
        if (size != units)
          problems.push_back({path, name + ": axis " + std::to_string(a) + " gives group " + gi->first + " " +
                                        std::to_string(units) + " units, another tensor " + std::to_string(size)});
        if (!is_float(t.dtype)) problems.push_back({path, name + ": a permuted tensor must be floating-point"});
        tp.axes.push_back({gi->second, outer, inner});
      }
    }
  }
  if (!problems.empty()) throw Error(ExitCode::incompatible, std::move(problems));
  return spec;
}

void check_spec_fits(const PermSpec& spec, const Reader& reference, const Reader& other) {
  // The spec is indexed by tensor position, so the files must list the same tensors in the same order (files of one
  // architecture do); a permuted tensor must also have the same shape.
  std::vector<Problem> problems;
  const auto& a = reference.tensors();
  const auto& b = other.tensors();
  if (a.size() != b.size())
    problems.push_back({other.path(), std::to_string(b.size()) + " tensors, " + reference.path() + " has " +
                                          std::to_string(a.size())});
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (b[i].name != a[i].name)
      problems.push_back({other.path(), "tensor " + std::to_string(i + 1) + " is " + b[i].name + ", " +
                                            reference.path() + " has " + a[i].name + " there"});
    else if (spec.tensors[i].permuted() && (b[i].shape != a[i].shape || !is_float(b[i].dtype)))
      problems.push_back({other.path(), a[i].name + ": expected " + shape_string(a[i].shape) + ", found " +
                                            std::string(dtype_name(b[i].dtype)) + " " + shape_string(b[i].shape)});
  }
  if (!problems.empty()) throw Error(ExitCode::incompatible, std::move(problems));
}

}  // namespace wavg::align
