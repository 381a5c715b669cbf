#pragma once
// safetensors checkpoints (https://github.com/huggingface/safetensors).
//
// On disk, all integers little-endian:
//
//   offset 0      u64 N             length of the header in bytes (N <= 100,000,000, 8 + N <= file size)
//   offset 8      N bytes           UTF-8 JSON object, possibly padded with trailing spaces:
//                                     { "__metadata__": { "k": "v", ... },          optional, strings only
//                                       "NAME": { "dtype": "F32", "shape": [d0, d1, ...],
//                                                 "data_offsets": [BEGIN, END] }, ... }
//   offset 8 + N  data section      tensors' bytes, row-major, little-endian; BEGIN/END relative to this point
//
// The reader applies the reference implementation's checks (safetensors/src/tensor.rs, `validate`): known dtype
// names, no duplicate keys, offsets sorted by BEGIN, the first at 0, each tensor starting where the previous one
// ended, the last ending exactly at the end of the file, END - BEGIN = product(shape) x dtype size (with the
// product checked for overflow), and `__metadata__` a map of strings. It memory-maps the file and copies tensor
// ranges straight out of the mapping. The writer pads the header with spaces to a multiple of 8 (so every tensor
// of an 8-byte dtype is aligned), writes `__metadata__` first, and lays the tensors out in a deterministic order:
// larger element sizes first, then by name, as the Python writer does.

#include <memory>
#include <string>
#include <vector>

#include "mapped_tensors.hpp"
#include "wavg/format.hpp"

namespace wavg {

class SafetensorsReader final : public MappedTensorsReader {
 public:
  explicit SafetensorsReader(std::string path);

  std::string layout() const override { return "safetensors"; }

 private:
  void parse_header(const char* text, std::size_t size);

  std::uint64_t m_data_start = 0;
};

// Tells whether a file starts like a safetensors file: a plausible header length followed by '{'.
bool looks_like_safetensors(const SniffInput& input);

std::unique_ptr<Writer> create_safetensors_writer(const std::string& tmp_path, const std::string& display_path,
                                                  const OutputSpec& spec);

// Returns the safetensors name of a dtype ("F32", "BOOL", ...).
std::string safetensors_dtype_name(DType t);

}  // namespace wavg
