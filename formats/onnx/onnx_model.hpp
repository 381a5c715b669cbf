#pragma once
// What the ONNX reader and writer share (layout in onnx.hpp): the parsed ModelProto, the tensors listed from it with
// their roles, and where each one's values lie.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "wavg/mapped_file.hpp"
#include "wavg/tensor.hpp"

namespace wavg_onnx {
class GraphProto;
class ModelProto;
class NodeProto;
class TensorProto;
}  // namespace wavg_onnx

namespace wavg {

// How a tensor's values are stored: raw_data, a typed field (float_data, int32_data, ...), or an external file.
enum class OnnxStored : std::uint8_t { raw, typed, external };

// What holds a listed tensor: the main graph's initializers, a Constant node of the main graph, or a subgraph of a
// main graph's node (an If's branch, a Loop's or Scan's body, at any depth).
enum class OnnxHolder : std::uint8_t { initializer, constant_node, subgraph };

// Where a listed tensor lies: a graph initializer or a Constant node's value, and its values.
struct OnnxTensor {
  const wavg_onnx::TensorProto* proto = nullptr;  // in OnnxModel::proto
  OnnxHolder holder = OnnxHolder::initializer;
  std::size_t position = 0;  // its index in graph.initializer, or its node's (Constant, or holding the subgraph)
  OnnxStored stored = OnnxStored::raw;
  const unsigned char* bytes = nullptr;  // raw_data or the external range: the values as they lie
  std::size_t file = 0;                  // external: its index in OnnxModel::external
};

struct OnnxModel {
  OnnxModel();
  ~OnnxModel();
  OnnxModel(OnnxModel&&) noexcept;
  OnnxModel& operator=(OnnxModel&&) noexcept;

  std::unique_ptr<wavg_onnx::ModelProto> proto;
  std::vector<TensorInfo> tensors;  // in graph order: initializers, Constant nodes, subgraphs' initializers
  std::vector<OnnxTensor> where;    // per tensor
  std::vector<MappedFile> external;
  std::vector<std::string> external_paths;  // per external file, as opened (the folder and the location)
};

// The largest model file wavg parses: protobuf's limit on one message, 2 GiB - 1.
inline constexpr std::uint64_t k_max_onnx_bytes = 0x7fffffff;

// Parses the model at `path` (its `size` bytes at `data`) and lists and checks its tensors; throws Error naming the
// file with what is wrong.
OnnxModel parse_onnx(const std::string& path, const unsigned char* data, std::uint64_t size);

// Calls `on_graph` with each subgraph of node `n` (its GRAPH and GRAPHS attributes: an If's branches, a Loop's or
// Scan's body) and then each subgraph of that subgraph's nodes, depth first in attribute order. Throws Error naming
// `path` past 64 levels (protobuf's own recursion limit is 100; a stack holds this many frames).
void for_subgraphs(const wavg_onnx::NodeProto& n, const std::string& path,
                   const std::function<void(const wavg_onnx::GraphProto&)>& on_graph, int depth = 0);

// Returns ONNX's TensorProto.DataType of `dtype` (FLOAT = 1, ...).
int onnx_data_type(DType dtype);

// Copies `count` values of `t` from element `offset`, stored in its typed field, into `dst` in t's dtype.
void read_typed(const wavg_onnx::TensorProto& t, DType dtype, std::uint64_t offset, std::uint64_t count, void* dst);

// Sets `t`'s typed field for `dtype` to the `count` values at `src`, clearing its other value fields.
void write_typed(wavg_onnx::TensorProto& t, DType dtype, std::uint64_t count, const void* src);

}  // namespace wavg
