#pragma once
// Flax checkpoints: the bytes of flax.serialization.to_bytes / msgpack_serialize (flax/serialization.py), saved as
// `flax_model.msgpack` by Hugging Face's Flax models and as `checkpoint_N` by flax.training.checkpoints.
//
// One msgpack value (github.com/msgpack/msgpack/blob/master/spec.md), a map of nested maps (a state dict: module
// and optimizer state; tuples and lists become maps keyed "0", "1", ...), whose leaves are:
//
//   ext type 1 (ndarray)     the payload is itself msgpack: a 3-array [shape, dtype, data]
//                            shape   array of non-negative integers (empty for a 0-d array)
//                            dtype   string (bin in old writers): numpy's dtype name, "float32", "bfloat16", ...
//                            data    bin: the elements, C order, the writer's byte order (little-endian here)
//   ext type 3 (npscalar)    a numpy scalar (np.float32(2.0)), encoded as a 0-d ndarray
//   ext type 2 (complex)     a Python complex, payload msgpack [real, imag]
//   nil, bool, int, float, str, bin, array   plain Python values (a step counter, a learning rate)
//   a chunked array          an ndarray above 2^30 bytes, which msgpack cannot hold in one bin, is a map
//                            {"__msgpack_chunked_array__": true, "shape": {"0": d0, "1": d1, ...},
//                             "chunks": {"0": ext 1 (1-d), "1": ext 1 (1-d), ...}}: its elements flattened and cut
//                            into 2^30 / itemsize-element pieces, in order
//
// A tensor is named by its key path ("params/Dense_0/kernel"; an array's items by index). The reader parses the
// whole structure with msgpack-c's visitor (no array data copied: every payload is an offset into the mapping),
// checks every shape, dtype name and data length against the bytes that hold them, and refuses keys that are not
// strings, contain '/' or repeat, complex and object arrays, unknown dtypes and trailing bytes. Other leaves are
// kept from input 1 (kept_entries). Tensors are served by view() from the mapping where their data are aligned.
//
// The writer keeps input 1's tree when input 1 is a Flax file (its maps, arrays and kept leaves, in its order),
// else builds nested maps from the names split at '/'. Every header is packed by msgpack-c's packer; the file is
// laid out and sized once and every block written in place; arrays above 2^30 bytes are written chunked as flax
// does. Provenance has no place in the format: Flax outputs carry none.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flax/msgpack_tree.hpp"
#include "mapped_tensors.hpp"
#include "wavg/format.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg {

// Where the elements of one tensor lie: one piece, or one per chunk of a chunked array.
struct FlaxPiece {
  std::uint64_t at = 0;     // file offset of the piece's first element
  std::uint64_t first = 0;  // the tensor's flat index of that element
  std::uint64_t count = 0;  // elements in the piece
};

class FlaxReader final : public MappedPiecesReader {
 public:
  explicit FlaxReader(std::string path);

  std::vector<std::string> kept_entries() const override { return m_kept; }

  const msgpack_tree::Tree& tree() const { return m_tree; }
  // Returns the tree node of each tensor (an ext or a chunked array's map), in tensors() order.
  const std::vector<std::uint32_t>& tensor_nodes() const { return m_nodes; }

 private:
  void walk(std::uint32_t node, const std::string& name);
  void add_array(std::uint32_t node, const std::string& name);
  void add_chunked(std::uint32_t node, const std::string& name);
  void pieces(std::size_t index, std::uint64_t offset, std::uint64_t count, const PieceFn& f) const override;

  MappedFile m_file;
  msgpack_tree::Tree m_tree;
  std::vector<std::uint32_t> m_nodes;
  std::vector<std::vector<FlaxPiece>> m_pieces;
  std::vector<std::string> m_kept;
};

// Gives the tensors of a TrainState-shaped tree (names "params/...", "batch_stats/...", "opt_state/...") their
// roles: the Flax codec's and the Orbax codec's, whose trees are the same PyTrees.
void assign_train_state_roles(std::vector<TensorInfo>& tensors);

// Tells whether a file starts with a msgpack map whose first key is a string (or is an empty map).
bool looks_like_flax(const SniffInput& input);

std::unique_ptr<Writer> create_flax_writer(const std::string& tmp_path, const std::string& display_path,
                                           const OutputSpec& spec);
// The same, cutting arrays above `chunk_bytes` into chunks (flax's 2^30 in create_flax_writer): for tests.
std::unique_ptr<Writer> create_flax_writer_chunked(const std::string& tmp_path, const std::string& display_path,
                                                   const OutputSpec& spec, std::uint64_t chunk_bytes);

}  // namespace wavg
