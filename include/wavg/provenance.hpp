#pragma once
// Provenance: what every file wavg writes records about how it was made. The entries are plain strings so that
// every format can hold them (HDF5 root attributes, safetensors __metadata__, wavg JSON metadata):
//   wavg_version  "0.1.0"
//   wavg_command  "merge" / "convert"
//   wavg_method   "mean", "weighted mean (weights 1,3)", "copy"
//   wavg_inputs   JSON array [{"file": "a.h5", "sha256": "..."}, ...], file names without their directories
//   wavg_out_dtype  only when --out-dtype was given

#include <map>
#include <string>
#include <vector>

namespace wavg {

// Returns the lower-case hex SHA-256 of a file's bytes. Throws Error (exit 1) naming the file if it cannot be read.
std::string sha256_file(const std::string& path);
// Returns the lower-case hex SHA-256 of a byte string.
std::string sha256_bytes(const void* data, std::size_t size);

// Builds the provenance entries for an output made by `command` with `method` from `inputs`.
std::map<std::string, std::string> make_provenance(const std::string& command, const std::string& method,
                                                   const std::vector<std::string>& inputs,
                                                   const std::string& out_dtype);

}  // namespace wavg
