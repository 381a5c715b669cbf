#pragma once
// Caffe `.caffemodel` snapshots: one binary protobuf NetParameter (BVLC/caffe src/caffe/proto/caffe.proto; the
// subset wavg declares is caffe_subset.proto beside this file, compiled by protoc).
//
// Protobuf wire format: a message is a sequence of fields, each a varint tag (field number << 3 | wire type) then
// a varint (type 0), 8 bytes (1), a varint length and that many bytes (2), or 4 bytes (5). A packed repeated
// number field is one type-2 field holding the numbers back to back. The fields wavg reads:
//
//   NetParameter      1 name (string), 2 layers (V1LayerParameter, repeated), 100 layer (LayerParameter, repeated);
//                     others (input, input_shape, state, ...) are kept as they are
//   LayerParameter    current layout (since 2015): 1 name, 2 type (string), 7 blobs (BlobProto, repeated)
//   V1LayerParameter  V1 layout (before 2015): 4 name, 5 type (enum: 4 CONVOLUTION, 14 INNER_PRODUCT, 39
//                     DECONVOLUTION, ...), 6 blobs; 1 layer (V0LayerParameter, with blobs as field 50: the V0
//                     layout is refused)
//   BlobProto         7 shape (BlobShape: 1 dim, packed int64), 5 data (packed float), 8 double_data (packed
//                     double), 6 diff / 9 double_diff (gradients), 1 num, 2 channels, 3 height, 4 width (the 4-D
//                     legacy shape of files without BlobShape)
//
// Tensors are named LAYER/INDEX (conv1/0 the weights, conv1/1 the bias), in file order. A blob holds float32
// (data) or float64 (double_data). A legacy 4-D shape (num, channels, height, width) is normalised to the shape
// Caffe gives the same blob today, so that a V1 and a current snapshot of one net merge: a CONVOLUTION or
// DECONVOLUTION weight keeps its four dimensions, an INNER_PRODUCT weight (1, 1, O, I) is (O, I), a bias
// (1, 1, 1, C) is (C,), and any other blob loses its leading 1s.
//
// The reader never holds a whole NetParameter: it maps the file and walks the wire format to each blob, whose values
// it serves straight from the mapping (a packed data field is one run of the file; old files' unpacked values, one
// field each, are gathered); only the small rest of each layer and blob (names, types, shapes, fields wavg does not
// declare) is parsed with protobuf's generated classes. Every tag, length and varint is checked against the file,
// and the reader refuses, naming the layer: both layouts in one file, a V0 layer with blobs, a layer with blobs and
// no name, two layers of one name, a negative dimension, an element count that disagrees with the shape, both data
// and double_data, and gradients (diff). The writer streams: from input 1 it copies every byte of the net, its
// layers and their blobs in their order (fields wavg does not declare included) but the blobs' values, which it
// writes packed where input 1's first value field was, each as one data (float32) or double_data (float64) field
// whose length is known from the element count, so every offset of the output is known before any value arrives
// and blocks land in place. From another format it writes the current layout with one layer per LAYER/ prefix
// holding only a name and the blobs, which Caffe's CopyTrainedLayersFrom matches by name. The format has no place
// for metadata: Caffe outputs carry no provenance.
//
// BatchNorm (current layout, type "BatchNorm"): blob 0 is a sum of means, blob 1 a sum of variances, and blob 2 (one
// value) s, the moving-average factor they are scaled by; Caffe uses mean = blob0 * (s == 0 ? 0 : 1 / s), and so
// for the variance. Two snapshots whose s differ (s grows each iteration towards 1 / (1 - moving_average_fraction))
// hold statistics on different scales, and the mean of their raw blobs is no snapshot's statistics. So the reader
// serves a BatchNorm layer's statistics normalised: blobs 0 and 1 times that factor (factor and product in the blobs'
// dtype, as Caffe's BatchNormLayer<float> computes them for float32 blobs) and blob 2 as 1, which is what Caffe
// computes from them; any merge then combines the effective statistics and its output, whose blob 2 is 1, means the
// same to Caffe. A layer whose s is already 1 is served as stored. These three blobs are buffers, every other blob a
// weight (a .caffemodel holds no solver state). A BatchNorm layer with fewer than three blobs, or a blob 2 of other
// than one value, is refused: its statistics' scale is unknown.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "listed_reader.hpp"
#include "wavg/format.hpp"

namespace wavg {

struct CaffeIndex;

class CaffeReader final : public ListedReader {
 public:
  explicit CaffeReader(std::string path);
  ~CaffeReader() override;

  std::string layout() const override;
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override;
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void release(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  std::map<std::string, std::string> metadata() const override;

  // Returns the index of the file's blobs and the file's bytes (the writer's template).
  const CaffeIndex& index() const;
  const unsigned char* bytes() const;

 private:
  // Gives the blobs of BatchNorm layer `layer` (tensors first .. first + n) their roles and normalised values.
  void normalise_batch_norm(const std::string& layer, std::size_t first, std::size_t n);
  // Copies `count` stored values of tensor `index` from element `offset` into `dst`.
  void gather(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) const;
  // Returns the byte range of the file holding values offset .. offset + count of tensor `index`.
  std::pair<std::uint64_t, std::uint64_t> byte_range(std::size_t index, std::uint64_t offset,
                                                     std::uint64_t count) const;

  struct Net;
  std::unique_ptr<Net> m_net;
};

// Tells whether a file starts like a NetParameter: known top-level fields, and a layer with a name among them.
bool looks_like_caffe(const SniffInput& input);

std::unique_ptr<Writer> create_caffe_writer(const std::string& tmp_path, const std::string& display_path,
                                            const OutputSpec& spec);

}  // namespace wavg
