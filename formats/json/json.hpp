#pragma once
// wavg JSON: wavg's own checkpoint format for small models and pipelines (formats/json/SPEC.md, schema.json).
//
//   {"format": "wavg-json",                       first member, so the file is recognised by its first bytes
//    "version": 1,
//    "metadata": {"KEY": "VALUE", ...},           optional, strings only
//    "tensors": [
//      {"name": "dense/kernel", "dtype": "float32", "shape": [2, 3],
//       "data": [0.1, -2, "NaN", "Infinity", ...]},               row-major, one JSON value per element
//      {"name": "step", "dtype": "int64", "shape": [],
//       "encoding": "base64", "data": "BwAAAAAAAAA="},             little-endian bytes of all elements
//      ...]}
//
// Floats are written as the shortest decimal that reads back to the same bits when the decimal is rounded to
// binary64 and then to the element type (to nearest, ties to even); "NaN" is the positive quiet NaN without
// payload, "NaN:0xBITS" any other NaN, "Infinity" and "-Infinity" the infinities. A tensor's "data" comes after
// its "name", "dtype" and "shape", so the reader can decode values as it meets them.
//
// The reader walks the text once with a streaming cursor (json_text.hpp), never building a DOM: each tensor's
// values go straight into a binary buffer of its dtype. The counts are checked against the shape, and a shape is
// refused before any allocation when the file is too small to hold that many values. The writer keeps each
// tensor's values in binary until finish() and then writes the text in one sequential pass.

#include <memory>
#include <string>
#include <vector>

#include "listed_reader.hpp"
#include "wavg/format.hpp"

namespace wavg {

class JsonReader final : public ListedReader {
 public:
  explicit JsonReader(std::string path);
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override;
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override;

 private:
  std::vector<std::vector<unsigned char>> m_data;
};

// Tells whether a file starts like wavg JSON: '{' and "format": "wavg-json" as the first member.
bool looks_like_wavg_json(const SniffInput& input);

// Creates a writer whose tensors hold one JSON value per element ("json") or base64 strings ("json-base64").
enum class JsonEncoding { values, base64 };
std::unique_ptr<Writer> create_json_writer(const std::string& tmp_path, const std::string& display_path,
                                           const OutputSpec& spec, JsonEncoding encoding);

}  // namespace wavg
