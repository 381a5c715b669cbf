#pragma once
// TensorFlow's DataType numbers (tensorflow/core/framework/types.proto) against wavg's dtypes, and the DT_STRING
// encoding of one scalar string (layout in tensorflow.hpp), shared by the reader and the writer.

#include <cstdint>
#include <string>

#include "wavg/dtype.hpp"

namespace wavg {

enum class TfKind { number, string, refused };

struct TfType {
  TfKind kind = TfKind::refused;
  DType dtype = DType::f32;  // for numbers
  std::string name;          // TensorFlow's name, for messages
};

// Classifies a BundleEntryProto dtype.
TfType tf_type(int datatype);
// Returns the DataType number of a wavg dtype (every wavg dtype has one).
int tf_datatype(DType dtype);

// The DT_STRING scalar in which wavg records its provenance (a JSON object of strings) in the checkpoints it writes.
inline constexpr const char* k_tf_provenance_key = "_WAVG_PROVENANCE";
// Returns the bytes of a scalar DT_STRING tensor whose stored bytes (`size` of them, checksums already verified)
// are at `p`.
std::string tf_scalar_string(const unsigned char* p, std::uint64_t size);
// Encodes `value` as a scalar DT_STRING tensor's stored bytes, and its entry's (unmasked) crc32c in `crc`.
std::string tf_encode_scalar_string(const std::string& value, std::uint32_t& crc);

}  // namespace wavg
