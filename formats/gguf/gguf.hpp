#pragma once
// GGUF, llama.cpp's checkpoint file (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md).
//
// On disk, all integers little-endian; a string is a u64 length and that many bytes of UTF-8 (no terminator):
//
//   offset 0   u32 magic "GGUF"   u32 version (2 or 3; 1 had u32 counts and is refused)
//              u64 n_tensors       u64 n_kv
//   n_kv times   string key        u32 value type   value
//                  value types: 0 u8, 1 i8, 2 u16, 3 i16, 4 u32, 5 i32, 6 f32, 7 bool (one byte, 0 or 1),
//                  8 string, 9 array (u32 element type, u64 count, the elements; no array of arrays), 10 u64,
//                  11 i64, 12 f64
//   n_tensors times  string name   u32 n_dims (1..4)   u64 ne[n_dims] (ne[0] the innermost, contiguous axis)
//                    u32 ggml type   u64 offset (from the data section, a multiple of the alignment)
//   padding to the alignment (the u32 `general.alignment`, a power of two, 32 when absent)
//   data section: each tensor's rows of ne[0] elements, a row ne[0] / block elements x block bytes
//
// A quantized type stores a row as blocks of 32 (or 256, the K-quants) elements, each block its scales and its
// packed integers; gguf_blocks.hpp decodes them as llama.cpp's reference dequantize_row_* functions do, to float.
// The reader shows a tensor as numpy does (the shape ne reversed, row-major) and a quantized one as float32: its
// decoded values are float32 values exactly, so the engine averages what llama.cpp would compute with. Every count,
// length, offset and extent is checked against the file before it is used (ggml's gguf.cpp checks the same).
// The writer lays a file out as llama.cpp's gguf writer does: the template's key/value pairs in their order with
// the provenance added as wavg.* strings, general.alignment kept, each tensor's data padded to the alignment.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "listed_reader.hpp"
#include "wavg/mapped_file.hpp"
#include "wavg/format.hpp"

namespace wavg::gguf {

// The ggml tensor types wavg reads (ggml.h's enum ggml_type; the values are the file's).
enum class GgmlType : std::uint32_t {
  f32 = 0, f16 = 1, q4_0 = 2, q4_1 = 3, q5_0 = 6, q5_1 = 7, q8_0 = 8, q2_k = 10, q3_k = 11, q4_k = 12, q5_k = 13,
  q6_k = 14, q8_k = 15, i8 = 24, i16 = 25, i32 = 26, i64 = 27, f64 = 28, bf16 = 30,
};

// A type's row: its name as llama.cpp prints it, its block (elements, bytes) and how the reader shows it.
struct TypeTraits {
  GgmlType type;
  const char* name;        // "Q8_0"
  std::uint32_t block;     // elements per block (1 for a plain type)
  std::uint32_t bytes;     // bytes per block
  DType shown;             // the dtype the reader gives the engine: its own, or float32 for a quantized type
  bool writable;           // the writer stores it
  // llama.cpp's llama_ftype of a file whose matrices are all this type (LLAMA_FTYPE_MOSTLY_Q8_0 = 7), which the
  // writer records as general.file_type after --out-dtype; -1 for a type the writer does not store, or none.
  std::int32_t ftype = -1;
};

// Returns the row of the type with file value `value`, or null for a type wavg does not know.
const TypeTraits* type_traits(std::uint32_t value);
const TypeTraits& type_traits(GgmlType type);
// Returns the row of a type by its name, case-insensitive ("q8_0", "F16"), or null.
const TypeTraits* type_by_name(std::string_view name);

// The key/value types (gguf.h's enum gguf_type).
enum class ValueType : std::uint32_t {
  u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7, string = 8, array = 9, u64 = 10,
  i64 = 11, f64 = 12,
};

// One key/value pair as the file holds it: the bytes of its value (type and value, from the u32 type on), kept so
// the writer copies input 1's metadata unchanged, and a short text of it for `inspect`.
struct KeyValue {
  std::string key;
  ValueType type;
  std::string value_bytes;  // the u32 type and the value, exactly as on disk
  std::string shown;        // "string: llama", "array of 32000 string: <s>, </s>, ..."
};

class GgufReader final : public ListedReader {
 public:
  explicit GgufReader(std::string path);

  std::string layout() const override;
  std::string architecture() const override;
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override;
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void release(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) override;

  std::uint32_t version() const { return m_version; }
  std::uint64_t alignment() const { return m_alignment; }
  const std::vector<KeyValue>& key_values() const { return m_kv; }
  // Returns the ggml type tensor `index` is stored as.
  GgmlType stored_type(std::size_t index) const { return m_types[index]; }

 private:
  void parse_tensors(const unsigned char* data, std::uint64_t& at, std::uint64_t n_tensors);
  // The byte range of the blocks holding elements [offset, offset + count) of a quantized tensor.
  std::pair<std::uint64_t, std::uint64_t> block_bytes(std::size_t index, std::uint64_t offset,
                                                      std::uint64_t count) const;

  MappedFile m_file;
  std::uint32_t m_version = 0;
  std::uint64_t m_alignment = 32;
  std::vector<KeyValue> m_kv;
  std::vector<GgmlType> m_types;
  std::vector<std::uint64_t> m_at;  // per tensor, the file offset of its data
};

// Tells whether a file starts with the GGUF magic.
bool looks_like_gguf(const SniffInput& input);

std::unique_ptr<Writer> create_gguf_writer(const std::string& tmp_path, const std::string& display_path,
                                           const OutputSpec& spec);
// Returns each of the spec's tensors' stored type: --out-dtype's block or float type when given, else input 1's
// where wavg writes it. Refuses (Error naming `display_path`) every tensor input 1 stores as a type wavg does not
// write, at once, and a tensor GGUF cannot hold.
std::vector<const TypeTraits*> stored_types(const OutputSpec& spec, const std::string& display_path);
// Returns the bytes of a GGUF output's data section (each tensor's blocks padded to the alignment), refusing as
// stored_types() does: the registry row's output_bytes, so both happen before any input is read.
std::uint64_t output_bytes(const OutputSpec& spec, const std::string& display_path);

}  // namespace wavg::gguf
