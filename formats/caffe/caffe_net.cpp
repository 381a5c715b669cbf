// Parsing a NetParameter and indexing its blobs (layout in caffe.hpp). Protobuf's parser checks the wire format
// but says only "failed"; when it fails, a short walk of the wire format over the fields wavg knows (the net, its
// layers, their blobs) finds the first problem and its byte offset, so the error says what is wrong and where.

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>

#include "caffe/caffe.hpp"
#include "caffe/caffe_net.hpp"
#include "wavg/error.hpp"

namespace wavg {

namespace {

// The V1 layer types whose legacy blob shapes are not just "drop the leading 1s" (V1LayerParameter.LayerType).
constexpr int k_v1_convolution = 4;
constexpr int k_v1_inner_product = 14;
constexpr int k_v1_deconvolution = 39;

// What a length-delimited field holds, as far as the walk follows it.
enum class Level { net, v1_layer, layer, blob, other };

Level child_level(Level parent, std::uint64_t field) {
  if (parent == Level::net && field == 2) return Level::v1_layer;
  if (parent == Level::net && field == 100) return Level::layer;
  if ((parent == Level::v1_layer && field == 6) || (parent == Level::layer && field == 7)) return Level::blob;
  return Level::other;
}

std::string field_name(Level parent, std::uint64_t field) {
  if (parent == Level::net && field == 2) return "field 2 (layers)";
  if (parent == Level::net && field == 100) return "field 100 (layer)";
  if (child_level(parent, field) == Level::blob) return "field " + std::to_string(field) + " (blobs)";
  return "field " + std::to_string(field);
}

// Reads a varint at `at` (at most 10 bytes), or returns false.
bool read_varint(const unsigned char* p, std::uint64_t end, std::uint64_t& at, std::uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 70 && at < end; shift += 7) {
    const unsigned char b = p[at++];
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return shift < 63 || b <= 1;
  }
  return false;
}

// Returns the first wire-format problem in the message at [begin, end), or an empty string.
std::string wire_problem(const unsigned char* p, std::uint64_t begin, std::uint64_t end, Level level, int depth) {
  std::uint64_t at = begin;
  while (at < end) {
    const std::uint64_t tag_at = at;
    std::uint64_t tag = 0, v = 0;
    if (!read_varint(p, end, at, tag)) return "broken varint (a field tag) at byte " + std::to_string(tag_at);
    const std::uint64_t field = tag >> 3;
    const std::string what = field_name(level, field) + " at byte " + std::to_string(tag_at);
    if (field == 0) return "field number 0 at byte " + std::to_string(tag_at);
    switch (tag & 7) {
      case 0:
        if (!read_varint(p, end, at, v)) return "broken varint in " + what;
        break;
      case 1:
      case 5: {
        const std::uint64_t n = (tag & 7) == 1 ? 8 : 4;
        if (end - at < n) return "truncated: " + what + " needs " + std::to_string(n) + " bytes";
        at += n;
        break;
      }
      case 2: {
        if (!read_varint(p, end, at, v)) return "broken varint (a length) in " + what;
        if (v > end - at)
          return "truncated: " + what + " claims " + std::to_string(v) + " bytes, " + std::to_string(end - at) +
                 " left";
        const Level child = child_level(level, field);
        if (child != Level::other && depth < 3) {
          std::string inner = wire_problem(p, at, at + v, child, depth + 1);
          if (!inner.empty()) return inner;
        }
        at += v;
        break;
      }
      default: return "unknown wire type " + std::to_string(tag & 7) + " in " + what;
    }
  }
  return {};
}

// The shape Caffe gives a blob stored with the legacy 4-D shape (see caffe.hpp).
Shape normalise_legacy(const wavg_caffe::BlobProto& b, int v1_type, int index) {
  const std::int64_t d[4] = {b.num(), b.channels(), b.height(), b.width()};
  auto u = [](std::int64_t x) { return static_cast<std::uint64_t>(x); };
  const bool conv = v1_type == k_v1_convolution || v1_type == k_v1_deconvolution;
  if (conv && index == 0) return {u(d[0]), u(d[1]), u(d[2]), u(d[3])};
  if (v1_type == k_v1_inner_product && index == 0 && d[0] == 1 && d[1] == 1) return {u(d[2]), u(d[3])};
  if ((conv || v1_type == k_v1_inner_product) && index == 1 && d[0] == 1 && d[1] == 1 && d[2] == 1) return {u(d[3])};
  std::size_t first = 0;
  while (first < 3 && d[first] == 1) ++first;
  Shape s;
  for (std::size_t i = first; i < 4; ++i) s.push_back(u(d[i]));
  return s;
}

// Checks one blob and returns its tensor; `name` is LAYER/INDEX.
TensorInfo blob_tensor(const wavg_caffe::BlobProto& b, const std::string& name, int v1_type, int index,
                       const std::string& file) {
  TensorInfo t{name, DType::f32, {}};
  if (b.diff_size() > 0 || b.double_diff_size() > 0)
    fail(file, "blob " + name + " holds gradients (diff): snapshots of weights only are supported");
  if (b.data_size() > 0 && b.double_data_size() > 0) fail(file, "blob " + name + " holds both data and double_data");
  if (b.double_data_size() > 0) t.dtype = DType::f64;
  if (b.has_shape()) {
    for (std::int64_t d : b.shape().dim()) {
      if (d < 0) fail(file, "blob " + name + ": negative dimension " + std::to_string(d));
      t.shape.push_back(static_cast<std::uint64_t>(d));
    }
  } else {
    for (std::int64_t d : {b.num(), b.channels(), b.height(), b.width()})
      if (d < 0) fail(file, "blob " + name + ": negative dimension " + std::to_string(d));
    t.shape = normalise_legacy(b, v1_type, index);
  }
  std::uint64_t count = 0;
  if (!checked_count(t.shape, dtype_size(t.dtype), count))
    fail(file, "blob " + name + ": shape " + shape_string(t.shape) + " overflows");
  const auto stored = static_cast<std::uint64_t>(t.dtype == DType::f64 ? b.double_data_size() : b.data_size());
  if (stored != count)
    fail(file, "blob " + name + " holds " + std::to_string(stored) + " values but its shape " + shape_string(t.shape) +
                   " needs " + std::to_string(count));
  return t;
}

// Finds the name of the layer message at [begin, end) (V1: field 4, current: field 1), or returns false.
bool layer_has_name(const unsigned char* p, std::uint64_t begin, std::uint64_t end, std::uint64_t name_field) {
  std::uint64_t at = begin, tag = 0, v = 0;
  while (at < end && read_varint(p, end, at, tag)) {
    const std::uint64_t type = tag & 7;
    if (type == 0) {
      if (!read_varint(p, end, at, v)) return false;
    } else if (type == 2) {
      if (!read_varint(p, end, at, v) || v > end - at) return false;
      if (tag >> 3 == name_field) {
        if (v == 0 || v > 4096) return false;
        // Text, not noise: no NUL. Other control characters are the reader's to refuse, naming the layer.
        return std::memchr(p + at, 0, v) == nullptr;
      }
      at += v;
    } else {
      return false;  // layers hold no fixed-width fields before their name
    }
  }
  return false;
}

}  // namespace

bool looks_like_caffe(const SniffInput& input) {
  // The first MiB is enough: a layer's name comes before its blobs.
  const auto* p = input.bytes().data();
  const auto end = std::min<std::uint64_t>(input.bytes().size(), 1 << 20);
  std::uint64_t at = 0, tag = 0, v = 0;
  while (at < end && read_varint(p, end, at, tag)) {
    const std::uint64_t field = tag >> 3, type = tag & 7;
    // NetParameter's fields and their wire types: 1 name, 2 layers, 3 input, 4 input_dim (plain or packed),
    // 5 force_backward, 6 state, 7 debug_info, 8 input_shape, 100 layer.
    const bool varint_field = field == 4 || field == 5 || field == 7;
    const bool bytes_field = (field >= 1 && field <= 4) || field == 6 || field == 8 || field == 100;
    if (type == 0 && varint_field) {
      if (!read_varint(p, end, at, v)) return false;
      continue;
    }
    if (type != 2 || !bytes_field || !read_varint(p, end, at, v)) return false;
    if (field == 2 || field == 100) return layer_has_name(p, at, at + std::min(v, end - at), field == 2 ? 4 : 1);
    if (v > end - at) return false;
    at += v;
  }
  return false;
}

void parse_net(const unsigned char* data, std::uint64_t size, wavg_caffe::NetParameter& net, const std::string& file) {
  if (size > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    fail(file, "larger than 2 GiB, the most a protobuf message can hold");
  if (net.ParseFromArray(data, static_cast<int>(size))) return;
  std::string problem = wire_problem(data, 0, size, Level::net, 0);
  if (problem.empty()) problem = "a nested message";
  fail(file, "not a valid NetParameter protobuf: " + problem);
}

CaffeBlobs index_blobs(wavg_caffe::NetParameter& net, const std::string& file) {
  CaffeBlobs out;
  if (net.layer_size() > 0 && net.layers_size() > 0)
    fail(file, "holds both layer (current layout) and layers (V1 layout)");
  out.layout = net.layers_size() > 0 ? CaffeLayout::v1 : CaffeLayout::current;
  std::set<std::string> seen;
  auto add_layer = [&](const std::string& name, auto* blobs, int v1_type) {
    if (blobs->empty()) return;
    if (name.empty()) fail(file, "a layer with " + std::to_string(blobs->size()) + " blobs has no name");
    if (std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
      fail(file, "the layer name '" + name + "' holds a control character, which no tensor name may");
    if (!seen.insert(name).second) fail(file, "two layers with blobs are named " + name);
    for (int i = 0; i < blobs->size(); ++i) {
      const std::string tensor = name + "/" + std::to_string(i);
      out.tensors.push_back(blob_tensor(blobs->Get(i), tensor, v1_type, i, file));
      out.blobs.push_back(blobs->Mutable(i));
    }
  };
  for (auto& l : *net.mutable_layer()) add_layer(l.name(), l.mutable_blobs(), -1);
  for (auto& l : *net.mutable_layers()) {
    if (l.has_layer() && l.layer().blobs_size() > 0)
      fail(file, "layer " + l.name() + " is in the V0 layout (before 2014), which is not supported");
    add_layer(l.name(), l.mutable_blobs(), l.type());
  }
  return out;
}

}  // namespace wavg
