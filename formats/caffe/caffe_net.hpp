#pragma once
// What the Caffe reader and writer share (layout in caffe.hpp): the index of a .caffemodel made by walking its wire
// format, without holding its NetParameter: every blob named LAYER/INDEX, checked and its shape normalised, and
// where its values and the fields around them lie in the file.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "wavg/tensor.hpp"

namespace wavg {

enum class CaffeLayout { current, v1 };

// A run of a blob's values in the file: `count` values from byte `at`, `stride` bytes apart (the value's size when
// packed; 5 or 9 when unpacked, each value behind its own one-byte tag), the first being the blob's value `first`.
struct CaffeRun {
  std::uint64_t first = 0;
  std::uint64_t at = 0;
  std::uint64_t count = 0;
  std::uint64_t stride = 0;
};

// A length-delimited field: where its tag starts, where its payload starts (after the length) and where it ends.
struct CaffeField {
  std::uint64_t tag_at = 0;
  std::uint64_t at = 0;
  std::uint64_t end = 0;
};

struct CaffeBlob {
  CaffeField field;                     // the BlobProto, a field of its layer
  std::vector<CaffeRun> runs;           // its values, in order
  std::vector<CaffeField> data_fields;  // every data or double_data field of it, packed or not, in file order
};

// A layer with blobs: its field in the net, its name and type (current layout), and its tensors first .. first +
// count.
struct CaffeLayer {
  CaffeField field;
  std::string name;
  std::string type;
  std::size_t first = 0;
  std::size_t count = 0;
};

struct CaffeIndex {
  CaffeLayout layout = CaffeLayout::current;
  std::vector<TensorInfo> tensors;
  std::vector<CaffeBlob> blobs;    // per tensor, in the same order (file order)
  std::vector<CaffeLayer> layers;  // the layers with blobs, in file order
  bool has_name = false;
  std::string name;        // the net's
  std::uint64_t size = 0;  // the file's
};

// Walks the `size` bytes of a .caffemodel and indexes its blobs; throws Error naming `file` with the first
// wire-format problem found, or what cannot be averaged, naming the layer.
CaffeIndex index_net(const unsigned char* data, std::uint64_t size, const std::string& file);

}  // namespace wavg
