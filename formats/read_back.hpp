#pragma once
// What a writer that reads its finished output back before commit (HDF5 over input 1's copy, DCP) compares: the
// tensors the output reads back as against those it was meant to hold, so an output wavg could not read again is
// never committed.

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "wavg/tensor.hpp"

namespace wavg {

// Returns the first difference between the tensors read back and those meant (their count, a name missing, a dtype
// or shape changed), in words, or nothing.
inline std::optional<std::string> read_back_difference(const std::vector<TensorInfo>& back,
                                                       const std::vector<TensorInfo>& meant) {
  std::unordered_map<std::string_view, const TensorInfo*> found;
  for (const TensorInfo& t : back) found.emplace(t.name, &t);
  if (found.size() != meant.size())
    return std::to_string(found.size()) + " tensors instead of " + std::to_string(meant.size());
  for (const TensorInfo& t : meant) {
    const auto it = found.find(t.name);
    if (it == found.end()) return t.name + " is missing";
    if (!same_element_type(*it->second, t) || it->second->shape != t.shape) return t.name + " changed type or shape";
  }
  return std::nullopt;
}

}  // namespace wavg
