#pragma once
// The one check of a path that a model file names for another file beside it (a TF.js shard, an ONNX tensor's
// external data): relative, inside the model's folder, and opened without following a link out of it.

#include <string>

#include "wavg/mapped_file.hpp"

namespace wavg {

// Returns what is wrong with `path` as a file name relative to a model's folder ("is absolute", "has a '..'
// component", ...), or "" when nothing is: a named file must lie in the folder or below it.
std::string relative_path_problem(const std::string& path);

// Maps the companion `rel` of the model `model` whose folder is `dir` ("" or ending in '/'), checked by
// relative_path_problem, opened as a regular file that is no symbolic link, and resolving to a path inside the
// folder (so no linked folder leads out of it). Throws Error naming `model`, the companion called `what` ("external
// data weights.bin"), and what is wrong.
MappedFile map_companion(const std::string& model, const std::string& dir, const std::string& rel,
                         const std::string& what);

}  // namespace wavg
