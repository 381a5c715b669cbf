#pragma once
// TensorFlow.js models (tensorflowjs 4.x: write_weights.py, read_weights.py, quantization.py; tfjs-core io).
//
// A model is a JSON file (model.json) and binary shard files beside it:
//
//   { "format": "layers-model" | "graph-model",    optional; absent in a bare weights manifest
//     "generatedBy": "...", "convertedBy": "...",
//     "modelTopology": {...},                        Keras config (layers) or GraphDef JSON (graph), kept verbatim
//     "signature": {...}, "userDefinedMetadata": {...}, ...   other members, kept verbatim
//     "weightsManifest": [                           groups
//       { "paths": ["group1-shard1of2.bin", "group1-shard2of2.bin"],   relative to model.json's directory
//         "weights": [ { "name": "dense/kernel", "shape": [3, 4], "dtype": "float32",
//                        "quantization": {"dtype": "uint8", "scale": S, "min": M} }, ... ] }, ... ] }
//
// A group's weights lie back to back, in manifest order, in the concatenation of its shard files (a weight may
// span shards), little-endian and row-major, with no padding and nothing after the last weight. Stored element
// types: float32, int32, bool (1 byte); a quantised weight stores uint8 or uint16 q, read as q * scale + min
// (computed in double, rounded once to float32, or to int32 half-to-even as numpy's round), or IEEE half for
// "float16". string and complex64 weights are refused.
//
// The reader distrusts model.json: at most 256 MiB, valid UTF-8 JSON, unique weight names, shapes of non-negative
// integers whose byte size does not overflow, finite scale and min, relative shard paths without ".." components,
// shards that are regular files (checked on the open descriptor, so a FIFO never blocks), not symbolic links, and
// resolve to a path inside model.json's directory (so no linked directory leads out of it), and each group's shard
// bytes equal to its weights' bytes exactly. It maps the
// shards and copies from the mappings. Its metadata() holds format, generatedBy, convertedBy and the string
// members of userDefinedMetadata, with userDefinedMetadata.wavg (wavg's provenance) flattened in.
//
// The writer writes OUT.json and OUT-shardIofN.bin (4 MiB each, the converter's default) beside it, as one output:
// the shards are companions of the AtomicFile (atomic_file.hpp), placed as new files before model.json is renamed
// into place, so a reader finds either the old model whole or the new one. When a shard name is taken (by the
// model --force replaces, or by shards a killed run left), all shards are named OUT-TOKEN-shardIofN.bin instead,
// TOKEN six letters and digits unique to the run; the replaced model.json's shards are removed after the switch, as
// removal.hpp allows: TF.js weight files of the folder itself that no other *.json model there lists (shards of
// the output's name that no model lists, a killed run's, are a refusal without --force).
// model.json keeps every member of input 1's model.json (when input 1 is TF.js), replaces
// weightsManifest by one group holding the output's weights in order (float32 unquantised, int32, bool), and sets
// userDefinedMetadata.wavg to the provenance entries. A shard that would be the same file as an input (or one of
// an input's shards) is refused before anything is written.

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "listed_reader.hpp"
#include "wavg/format.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg {

// How a weight is stored in its shards.
enum class TfjsStored : std::uint8_t { plain, uint8_affine, uint16_affine, float16 };

class TfjsReader final : public ListedReader {
 public:
  explicit TfjsReader(std::string path);
  ~TfjsReader() override;

  // Returns model.json, then each group's shards in manifest order.
  std::vector<std::string> files() const override;
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override;
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void release(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  // Lists where a plainly stored weight crosses from one shard into the next, so the engine's blocks end there and
  // view() lends each from one mapping instead of read() copying it (most blocks of a weight over 4 MiB crossed).
  std::vector<std::uint64_t> boundaries(std::size_t index) const override;

  // Returns model.json's text, as read.
  const std::string& model_json() const { return m_text; }

 private:
  struct Shard {
    MappedFile file;
    std::uint64_t start = 0;  // offset of its first byte in the group's concatenation
  };
  struct Group {
    std::vector<Shard> shards;
    std::uint64_t bytes = 0;
  };
  struct Weight {
    std::size_t group = 0;
    std::uint64_t start = 0;  // offset in the group's concatenation
    TfjsStored stored = TfjsStored::plain;
    double scale = 1, min = 0;
  };

  void parse(const std::string& text);
  void open_group(std::size_t g, const void* group_json);
  void add_weight(std::size_t g, const void* weight_json, std::uint64_t& at);
  // Returns the shard after the last one starting at or before byte `at` of the group (a binary search: a scan
  // per block cost shards x blocks).
  static std::vector<Shard>::const_iterator shard_after(const Group& g, std::uint64_t at);
  void copy_bytes(const Group& g, std::uint64_t at, std::uint64_t n, unsigned char* dst) const;
  // Calls (shard.*f)(begin, end) for the piece of each shard that holds elements [offset, offset + count).
  void for_mapped_ranges(std::size_t index, std::uint64_t offset, std::uint64_t count,
                         void (MappedFile::*f)(std::uint64_t, std::uint64_t) const) const;

  std::string m_dir;
  std::string m_text;
  std::vector<Weight> m_weights;
  std::vector<Group> m_groups;
  std::set<std::pair<std::uint64_t, std::uint64_t>> m_shard_files;  // every shard's (device, inode): one file
                                                                    // listed twice (or hard-linked) is refused
};

// The largest model.json wavg reads: it holds no weights, and the largest real ones are a few MiB.
constexpr std::uint64_t k_max_model_json = 256ull << 20;
// Reads a whole model.json; fails naming it when it is not a regular file or is larger than k_max_model_json.
std::string read_model_json(const std::string& path);
// Returns the shard paths, relative to its directory, that the model.json at `path` lists (those the reader would
// accept), or none when it is not a TF.js model.json wavg can read: the files of an old output that --force
// replaces, to be removed once the new one is in place.
std::vector<std::string> tfjs_listed_shards(const std::string& path);

// Tells whether a file is a JSON object with a "weightsManifest" member (and not wavg JSON).
bool looks_like_tfjs(const SniffInput& input);

std::unique_ptr<Writer> create_tfjs_writer(const std::string& tmp_path, const std::string& display_path,
                                           const OutputSpec& spec);

}  // namespace wavg
