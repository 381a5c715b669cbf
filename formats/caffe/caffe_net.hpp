#pragma once
// What the Caffe reader and writer share (layout in caffe.hpp): the generated messages, and the walk that finds
// every blob of a parsed NetParameter, names it LAYER/INDEX, checks it and normalises its shape.

#include <string>
#include <vector>

#include "formats/caffe/caffe_subset.pb.h"
#include "wavg/tensor.hpp"

namespace wavg {

enum class CaffeLayout { current, v1 };

struct CaffeBlobs {
  CaffeLayout layout = CaffeLayout::current;
  std::vector<TensorInfo> tensors;
  std::vector<wavg_caffe::BlobProto*> blobs;  // per tensor, in the same order
};

// Finds, checks and names every blob of `net`; throws Error naming `file` and the layer for what cannot be averaged.
CaffeBlobs index_blobs(wavg_caffe::NetParameter& net, const std::string& file);

// Parses `size` bytes as a NetParameter, or throws Error naming `file` with the first wire-format problem found.
void parse_net(const unsigned char* data, std::uint64_t size, wavg_caffe::NetParameter& net, const std::string& file);

}  // namespace wavg
