#pragma once
// TensorFlow checkpoints: TensorBundles, as tf.train.Saver (TF1) and tf.train.Checkpoint (TF2) write them
// (tensorflow/core/util/tensor_bundle/tensor_bundle.cc, core/lib/io/table*.cc).
//
// A checkpoint is named by its prefix P (model.ckpt-1000, ckpt-3, variables/variables) and is these files:
//
//   P.index                      a LevelDB-format table (sorted string keys -> values):
//     data blocks                  entries with prefix-compressed keys, then restart offsets (u32 LE each) and
//                                  their count (u32 LE); each block is followed by a 5-byte trailer: a type byte
//                                  (0 plain, 1 snappy-compressed) and the masked CRC-32C of block + type (u32 LE)
//     metaindex block              empty (no filter)
//     index block                  one entry per data block: a key >= its last key -> BlockHandle of the block
//     footer (48 bytes)            metaindex and index BlockHandles (varint64 offset, varint64 size each), zero
//                                  padding to 40 bytes, magic 0xdb4775248b80fb57 (u64 LE)
//   its entries:
//     ""                           BundleHeaderProto: num_shards, endianness (0 little), version {producer,
//                                  min_consumer}
//     a variable's name            BundleEntryProto: dtype (TensorFlow's DataType number), shape (dims, each a
//                                  size >= 0), shard_id, offset, size, crc32c (masked CRC-32C of the bytes), and
//                                  `slices` for a partitioned variable (whose pieces are other entries)
//   P.data-SSSSS-of-NNNNN        shard S of N (five digits or more): each tensor's bytes at [offset,
//                                offset + size), numbers little-endian and row-major, back to back (alignment 1)
//
// A DT_STRING tensor's bytes are: one varint64 length per element, the masked CRC-32C of those lengths (each taken
// as a u32 LE, or u64 LE when over 2^32 - 1) as u32 LE, then the elements' bytes; its entry's crc32c covers the
// same lengths, the masked length checksum and the bytes. TF1 names variables by their graph names (dense/kernel,
// dense/kernel/Adam, global_step); TF2 by object path (net/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE)
// and adds the DT_STRING tensor _CHECKPOINTABLE_OBJECT_GRAPH (a serialized TrackableObjectGraph).
//
// The reader lists the numeric tensors (half, bfloat16, float, double, the integers, bool) and keeps DT_STRING
// tensors aside: they are no weights, and the writer copies input 1's byte for byte. Variant and resource entries,
// partitioned variables, other dtypes and big-endian bundles are refused by name. It distrusts the index: the
// footer's and every block's handle are checked against the file's size before LevelDB reads a block, block
// checksums are verified, keys must be strictly increasing, every entry's shape, shard, offset and size are
// checked against its dtype and its shard's size, and every tensor's crc32c is verified when the checkpoint is
// opened (so a mismatch is found before anything is written). Shards are memory-mapped (MappedFile).
//
// The writer writes P.index (the AtomicFile's main file) and P.data-00000-of-00001 (a companion, so both appear
// together or neither), plus the `checkpoint` state file beside them with --tf-state. Entries are sorted by key
// (LevelDB's TableBuilder, uncompressed as TensorFlow writes them), the header says one little-endian shard,
// version 1, and every crc32c is computed over the bytes written. Other data shards of the prefix (P.data-NNNNN-of-
// NNNNN of an older checkpoint) are removed after the commit with --force and refused without it (removal.hpp).

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "mapped_tensors.hpp"
#include "wavg/format.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg {

// Where one stored tensor lies: shard, byte range, and the masked crc32c from its entry.
struct TfStored {
  std::uint32_t shard = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t masked_crc = 0;
};

// A DT_STRING tensor, kept aside for the writer to copy.
struct TfStringTensor {
  std::string name;
  Shape shape;
  TfStored stored;
  const unsigned char* bytes = nullptr;  // stored.size bytes inside the reader's mapping of its shard
};

class TensorflowReader final : public MappedPiecesReader {
 public:
  // Opens the checkpoint with prefix `path`, or whose .index file `path` is.
  explicit TensorflowReader(std::string path);
  ~TensorflowReader() override;

  std::vector<std::string> files() const override;

  // Returns the DT_STRING tensors, in key order.
  const std::vector<TfStringTensor>& string_tensors() const { return m_strings; }

 private:
  void read_index();
  void add_entry(const std::string& key, const std::string& value);
  void open_shards();
  // Refuses two entries whose bytes overlap.
  void check_no_overlap() const;
  void check_crcs();
  void pieces(std::size_t index, std::uint64_t offset, std::uint64_t count, const PieceFn& f) const override;

  std::string m_prefix;
  std::uint32_t m_num_shards = 0;
  std::vector<TfStored> m_stored;  // per tensor
  std::vector<TfStringTensor> m_strings;
  std::vector<std::unique_ptr<MappedFile>> m_shards;  // per shard id; null when no entry uses it
  std::vector<std::string> m_protected;               // the .index and data shards: files()
};

// Gives every tensor its role (tf_roles.cpp): from the TF2 object graph `graph_bytes` (a serialized
// TrackableObjectGraph), or without one from TF1's slot and counter names. Throws Error for a corrupt graph.
void set_tensorflow_roles(std::vector<TensorInfo>& tensors, const std::string* graph_bytes, const std::string& path);

// Opens a TensorFlow checkpoint: a V1 file (tf_v1_reader.cpp) or a V2 bundle (TensorflowReader).
std::unique_ptr<Reader> open_tensorflow(const std::string& path);
// Tells whether `path` is a TF1 V1 checkpoint: a file, not named .index, ending in LevelDB's table magic number.
bool looks_like_tensorflow_v1(const std::string& path);

// Tells whether `path` is a checkpoint prefix: no file of that name, but a file PREFIX.index.
bool is_tensorflow_prefix(const std::string& path);
// Tells whether `bytes` end in LevelDB's table magic number (a .index, or a V1 checkpoint).
bool has_table_magic(std::span<const unsigned char> bytes);
// Tells whether an input names a TensorFlow checkpoint: a prefix P with no file of that name but a P.index, or a
// file ending in LevelDB's table magic number (a .index, or a V1 checkpoint).
bool looks_like_tensorflow(const SniffInput& input);

// Tells whether an output name says TensorFlow: it ends in .index or .ckpt, or in .ckpt-N (model.ckpt-1000). The
// registry asks about .ckpt first: PyTorch Lightning's extension too, it follows input 1.
bool is_tensorflow_output_name(const std::string& path);
// Returns the file an output named `path` is committed as: PREFIX.index (`path` with or without .index).
std::string tensorflow_index_path(const std::string& path);

std::unique_ptr<Writer> create_tensorflow_writer(const std::string& tmp_path, const std::string& display_path,
                                                 const OutputSpec& spec);

}  // namespace wavg
