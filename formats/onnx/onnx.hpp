#pragma once
// ONNX models (`.onnx`): one binary protobuf ModelProto (onnx/onnx onnx/onnx.proto; the subset wavg declares is
// onnx_subset.proto beside this file, compiled by protoc). The parts wavg reads:
//
//   ModelProto        1 ir_version, 2 producer_name, 3 producer_version, 7 graph, 14 metadata_props (key/value)
//   GraphProto        1 node (NodeProto, repeated), 5 initializer (TensorProto, repeated)
//   NodeProto         1 input, 2 output (names), 4 op_type, 7 domain, 5 attribute (AttributeProto: 1 name, 5 t,
//                     6 g and 11 graphs: subgraphs, GraphProtos of their own)
//   TensorProto       1 dims (int64), 2 data_type, 8 name, and its values in one of three forms:
//                     9 raw_data          little-endian bytes, row-major (what exporters write)
//                     4 float_data, 5 int32_data, 7 int64_data, 10 double_data, 11 uint64_data
//                                         typed fields (int32_data holds the 8- and 16-bit types and the bits of
//                                         FLOAT16 and BFLOAT16; uint64_data UINT32 and UINT64)
//                     14 data_location = 1 (EXTERNAL) with 13 external_data {location, offset, length}: the bytes
//                                         lie in another file beside the model (models over protobuf's 2 GiB)
//
// The tensors are the main graph's initializers of a numeric type (FLOAT, FLOAT16, BFLOAT16, DOUBLE, the integer
// types and BOOL), the `value` tensor of each Constant node of the main graph holding a float type (some exporters
// keep weights there), named by the node's output, and the initializers of every subgraph (AttributeProto 6 g and
// 11 graphs: an If's branches, a Loop's or Scan's body, at any depth; where sibling subgraphs name one alike, the
// first). Tensors of other types (strings, complex, 8-bit floats) and a subgraph's Constant nodes are not listed
// and are kept as input 1's. Roles come from the graph, subgraphs included: a float tensor is a weight, averaged,
// unless every node that consumes it takes it as a shape-like input (Resize's roi and scales, Upsample's scales);
// those and every integer or bool tensor (shapes, axes, indices) are graph constants, copied from input 1. metadata() is ModelProto.metadata_props, where the writer records the provenance.
//
// The reader distrusts the file: at most 2 GiB (protobuf's limit on a message), parsed by protobuf's generated
// classes (which keep every field wavg does not declare), then each tensor checked before use: a non-empty unique
// name, non-negative dims whose product and byte size do not overflow, exactly one value form, and exactly the
// element count the dims give (raw_data's bytes, a typed field's values, an external range's length). An external
// location must be a relative path without '..' components naming a regular file, not a symbolic link, that
// resolves inside the model's folder (as every companion file: tfjs.hpp, hf.hpp), offset and length decimal
// numbers, and the range inside that file. Values are served from raw_data or the external file's mapping as they
// lie (view), typed fields converted.
//
// The writer writes input 1's ModelProto with each tensor's values replaced, every other field (nodes, value
// infos, opsets, unknown fields) as parsed; the type of each tensor is its graph's, so a merge that would change it
// (--out-dtype) is refused, as is an output without an ONNX input 1 (an ONNX model is its graph). A tensor keeps
// input 1's value form (raw_data or its typed field), except that a model over 2 GiB, or any output of an input 1
// with external data, is written with external data: every tensor of 1 KiB or more (onnx's own threshold) goes to
// one companion file named OUT.data beside OUT (its own pattern: the output's file name and ".data"), at offsets
// aligned to 4 KiB, and its location, offset and length replace input 1's (a stale checksum is dropped). The
// companion is replaced, with --force, as the output is (atomic_file.hpp). An output without external data removes
// an OUT.data an earlier output of its name left, after the commit and as removal.hpp allows: with --force, and
// only when no other .onnx model in the folder names it.

#include <memory>
#include <string>
#include <vector>

#include "listed_reader.hpp"
#include "wavg/format.hpp"

namespace wavg {

struct OnnxModel;

class OnnxReader final : public ListedReader {
 public:
  explicit OnnxReader(std::string path);
  ~OnnxReader() override;

  // Returns the model file, then each external data file its tensors name, in order of first use.
  std::vector<std::string> files() const override;
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override;
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void release(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) override;

  // Returns the parsed model and where each tensor lies in it (the writer's template).
  const OnnxModel& model() const;

 private:
  std::unique_ptr<OnnxModel> m_model;
};

// Tells whether a file starts like a ModelProto: ir_version first, then ModelProto's fields, a graph among them.
bool looks_like_onnx(const SniffInput& input);

std::unique_ptr<Writer> create_onnx_writer(const std::string& tmp_path, const std::string& display_path,
                                           const OutputSpec& spec);

}  // namespace wavg
