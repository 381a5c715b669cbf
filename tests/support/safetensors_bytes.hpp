#pragma once
// safetensors files written and read by the tests' own few lines (the layout in formats/safetensors/safetensors.hpp:
// u64 LE header length, a JSON header, the data), so a test states its inputs and checks an output without wavg.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "support/bytes.hpp"
#include "support/temp_dir.hpp"

namespace wavg::test {

// One float32 tensor of a test file.
struct F32Tensor {
  std::string name;
  std::vector<std::uint64_t> shape;
  std::vector<float> values;
};

// Returns the bytes of a safetensors file holding `tensors` (F32, in this order) and `metadata`.
inline std::string safetensors_bytes(const std::vector<F32Tensor>& tensors,
                                     const std::map<std::string, std::string>& metadata = {}) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::string data;
  for (const F32Tensor& t : tensors) {
    const std::uint64_t begin = data.size();
    for (float v : t.values) data += le_bytes(v);
    header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  const std::string text = header.dump();
  return le_bytes(static_cast<std::uint64_t>(text.size())) + text + data;
}

// A safetensors file as the test reads it: each tensor's dtype, shape and float32 values, and the metadata.
struct ParsedSafetensors {
  std::map<std::string, std::vector<float>> values;
  std::map<std::string, std::vector<std::uint64_t>> shapes;
  std::map<std::string, std::string> dtypes;
  std::map<std::string, std::string> metadata;
};

// Parses the safetensors file at `path` (F32 values only).
inline ParsedSafetensors parse_safetensors(const std::string& path) {
  const std::string bytes = read_all(path);
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  const auto header = nlohmann::json::parse(bytes.substr(8, n));
  const std::string data = bytes.substr(8 + n);
  ParsedSafetensors out;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      for (const auto& [k, v] : entry.items()) out.metadata[k] = v.get<std::string>();
      continue;
    }
    out.dtypes[name] = entry["dtype"].get<std::string>();
    out.shapes[name] = entry["shape"].get<std::vector<std::uint64_t>>();
    const auto begin = entry["data_offsets"][0].get<std::uint64_t>(),
               end = entry["data_offsets"][1].get<std::uint64_t>();
    std::vector<float> values((end - begin) / 4);
    std::memcpy(values.data(), data.data() + begin, end - begin);
    out.values[name] = values;
  }
  return out;
}

}  // namespace wavg::test
