#pragma once
// The permutation spec as a JSON file (--perm-spec), for checkpoints whose architecture wavg cannot infer.

#include <string>

#include "wavg/align.hpp"

namespace wavg::align {

// Reads --perm-spec: {"tensors": {NAME: [AXIS, ...]}, "slots": {NAME: [AXIS, ...]}}, where each AXIS is a group
// name, null, or {"group": NAME, "outer": N}. Group sizes come from `reader`'s shapes and must agree (exit 3).
PermSpec read_spec_file(const Reader& reader, const std::string& path);

}  // namespace wavg::align
