// Indexing a .caffemodel (layout in caffe.hpp) without parsing its NetParameter whole. A first walk of the wire
// format over the fields wavg knows (the net, its layers, their blobs) checks every tag, length and varint and finds
// the first problem and its byte offset, so the error says what is wrong and where. A second walk then takes each
// blob's values as runs of the file (never copied) and everything else about a layer or a blob, which is small, into
// a buffer that protobuf's generated classes parse: they give names, types, shapes and the V0 layout protobuf's
// meaning (the last of repeated optional fields, wire types that do not match a field's making it an unknown field).

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>

#include "caffe/caffe.hpp"
#include "caffe/caffe_net.hpp"
#include "caffe/caffe_wire.hpp"
#include "formats/caffe/caffe_subset.pb.h"
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

// Returns the first wire-format problem in the message at [begin, end) of `file`, or an empty string.
std::string wire_problem(const unsigned char* p, std::uint64_t begin, std::uint64_t end, Level level, int depth,
                         const std::string& file) {
  ByteCursor c(file, p, end, begin);
  while (c.left() > 0) {
    const std::uint64_t tag_at = c.at();
    std::uint64_t tag = 0, v = 0;
    if (!c.varint(tag)) return "broken varint (a field tag) at byte " + std::to_string(tag_at);
    const std::uint64_t field = tag >> 3;
    const std::string what = field_name(level, field) + " at byte " + std::to_string(tag_at);
    if (field == 0) return "field number 0 at byte " + std::to_string(tag_at);
    switch (tag & 7) {
      case 0:
        if (!c.varint(v)) return "broken varint in " + what;
        break;
      case 1:
      case 5: {
        const std::uint64_t n = (tag & 7) == 1 ? 8 : 4;
        if (c.left() < n) return "truncated: " + what + " needs " + std::to_string(n) + " bytes";
        c.skip(n);
        break;
      }
      case 2: {
        if (!c.varint(v)) return "broken varint (a length) in " + what;
        if (v > c.left())
          return "truncated: " + what + " claims " + std::to_string(v) + " bytes, " + std::to_string(c.left()) +
                 " left";
        const Level child = child_level(level, field);
        if (child != Level::other && depth < 3) {
          std::string inner = wire_problem(p, c.at(), c.at() + v, child, depth + 1, file);
          if (!inner.empty()) return inner;
        }
        c.skip(v);
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

// What the walk of one blob found besides its shape: gradients, and how many float and double values it stores.
struct BlobValues {
  bool diff = false;
  std::uint64_t floats = 0;
  std::uint64_t doubles = 0;
};

// Checks one blob and returns its tensor; `b` holds its fields but the values, `name` is LAYER/INDEX.
TensorInfo blob_tensor(const wavg_caffe::BlobProto& b, const BlobValues& v, const std::string& name, int v1_type,
                       int index, const std::string& file) {
  TensorInfo t{name, DType::f32, {}};
  if (v.diff) fail(file, "blob " + name + " holds gradients (diff): snapshots of weights only are supported");
  if (v.floats > 0 && v.doubles > 0) fail(file, "blob " + name + " holds both data and double_data");
  if (v.doubles > 0) t.dtype = DType::f64;
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
  const std::uint64_t stored = t.dtype == DType::f64 ? v.doubles : v.floats;
  if (stored != count)
    fail(file, "blob " + name + " holds " + std::to_string(stored) + " values but its shape " + shape_string(t.shape) +
                   " needs " + std::to_string(count));
  return t;
}

// Finds the name of the layer message at [begin, end) (V1: field 4, current: field 1), or returns false.
bool layer_has_name(const unsigned char* p, std::uint64_t begin, std::uint64_t end, std::uint64_t name_field,
                    const std::string& file) {
  ByteCursor c(file, p, end, begin);
  std::uint64_t tag = 0, v = 0;
  while (c.left() > 0 && c.varint(tag)) {
    const std::uint64_t type = tag & 7;
    if (type == 0) {
      if (!c.varint(v)) return false;
    } else if (type == 2) {
      if (!c.varint(v) || v > c.left()) return false;
      if (tag >> 3 == name_field) {
        if (v == 0 || v > 4096) return false;
        // Text, not noise: no NUL. Other control characters are the reader's to refuse, naming the layer.
        return std::memchr(c.here(), 0, v) == nullptr;
      }
      c.skip(v);
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
  ByteCursor c(input.path(), p, end);
  std::uint64_t tag = 0, v = 0;
  while (c.left() > 0 && c.varint(tag)) {
    const std::uint64_t field = tag >> 3, type = tag & 7;
    // NetParameter's fields and their wire types: 1 name, 2 layers, 3 input, 4 input_dim (plain or packed),
    // 5 force_backward, 6 state, 7 debug_info, 8 input_shape, 100 layer.
    const bool varint_field = field == 4 || field == 5 || field == 7;
    const bool bytes_field = (field >= 1 && field <= 4) || field == 6 || field == 8 || field == 100;
    if (type == 0 && varint_field) {
      if (!c.varint(v)) return false;
      continue;
    }
    if (type != 2 || !bytes_field || !c.varint(v)) return false;
    if (field == 2 || field == 100)
      return layer_has_name(p, c.at(), c.at() + std::min(v, c.left()), field == 2 ? 4 : 1, input.path());
    if (v > c.left()) return false;
    c.skip(v);
  }
  return false;
}

namespace {

using caffe_wire::Field;
using caffe_wire::next_field;

CaffeField as_field(const Field& f) { return {f.tag_at, f.at, f.end}; }

[[noreturn]] void broken(const std::string& file, const std::string& what, std::uint64_t at) {
  fail(file, "not a valid NetParameter protobuf: " + what + " at byte " + std::to_string(at));
}

// Appends the value (unpacked) or values (packed) of data field `f` to the blob's runs.
void add_values(CaffeBlob& blob, std::uint64_t& total, const Field& f, std::uint64_t elem, const std::string& file) {
  blob.data_fields.push_back(as_field(f));
  if (f.wire == 2) {
    const std::uint64_t bytes = f.end - f.at;
    if (bytes % elem != 0)
      broken(file,
             "packed field " + std::to_string(f.number) + " of " + std::to_string(bytes) + " bytes holds no whole " +
                 "number of " + std::to_string(elem) + "-byte values",
             f.tag_at);
    if (bytes > 0) blob.runs.push_back({total, f.at, bytes / elem, elem});
    total += bytes / elem;
    return;
  }
  // Unpacked: one value per field. Fields back to back, as old files write them, extend one run.
  const std::uint64_t stride = f.end - f.tag_at;
  CaffeRun* last = blob.runs.empty() ? nullptr : &blob.runs.back();
  if (last && last->stride == stride && last->at + last->count * stride == f.at && last->first + last->count == total)
    ++last->count;
  else
    blob.runs.push_back({total, f.at, 1, stride});
  ++total;
}

// Walks the blob in field `bf`: its values become runs, its other fields are parsed into `b`.
CaffeBlob walk_blob(const unsigned char* p, const Field& bf, wavg_caffe::BlobProto& b, BlobValues& v,
                    const std::string& file) {
  CaffeBlob blob;
  blob.field = as_field(bf);
  std::string rest;
  Field f;
  for (ByteCursor c(file, p, bf.end, bf.at); c.left() > 0;) {
    if (!next_field(c, f)) broken(file, "a broken field in a blob", f.tag_at);
    const bool packed = f.wire == 2;
    if (f.number == 5 && (packed || f.wire == 5)) {
      add_values(blob, v.floats, f, 4, file);
    } else if (f.number == 8 && (packed || f.wire == 1)) {
      add_values(blob, v.doubles, f, 8, file);
    } else if ((f.number == 6 && (packed || f.wire == 5)) || (f.number == 9 && (packed || f.wire == 1))) {
      v.diff = v.diff || !packed || f.end > f.at;
    } else {
      rest.append(reinterpret_cast<const char*>(p + f.tag_at), f.end - f.tag_at);
    }
  }
  if (!b.ParseFromString(rest)) broken(file, "a broken shape or field in the blob", bf.tag_at);
  return blob;
}

}  // namespace

CaffeIndex index_net(const unsigned char* data, std::uint64_t size, const std::string& file) {
  if (size > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    fail(file, "larger than 2 GiB, the most a protobuf message can hold");
  const std::string problem = wire_problem(data, 0, size, Level::net, 0, file);
  if (!problem.empty()) fail(file, "not a valid NetParameter protobuf: " + problem);

  // The net: its layers' fields, and the rest (its name and fields wavg does not declare) for protobuf.
  std::vector<Field> current, v1;
  std::string rest;
  Field f;
  for (ByteCursor c(file, data, size); c.left() > 0;) {
    const bool ok = next_field(c, f);
    WAVG_ASSERT(ok);  // wire_problem checked every field of the net
    if (f.wire == 2 && f.number == 100)
      current.push_back(f);
    else if (f.wire == 2 && f.number == 2)
      v1.push_back(f);
    else
      rest.append(reinterpret_cast<const char*>(data + f.tag_at), f.end - f.tag_at);
  }
  CaffeIndex out;
  out.size = size;
  wavg_caffe::NetParameter net;
  if (!net.ParseFromString(rest)) broken(file, "a broken field in the net", 0);
  out.has_name = net.has_name();
  out.name = net.name();
  if (!current.empty() && !v1.empty()) fail(file, "holds both layer (current layout) and layers (V1 layout)");
  out.layout = v1.empty() ? CaffeLayout::current : CaffeLayout::v1;
  const std::uint64_t blob_field = v1.empty() ? 7 : 6;

  std::set<std::string> seen;
  for (const Field& lf : v1.empty() ? current : v1) {
    std::vector<Field> blobs;
    std::string head;
    for (ByteCursor c(file, data, lf.end, lf.at); c.left() > 0;) {
      const bool ok = next_field(c, f);
      WAVG_ASSERT(ok);  // and of its layers
      if (f.wire == 2 && f.number == blob_field)
        blobs.push_back(f);
      else
        head.append(reinterpret_cast<const char*>(data + f.tag_at), f.end - f.tag_at);
    }
    std::string name, type;
    int v1_type = -1;
    if (v1.empty()) {
      wavg_caffe::LayerParameter l;
      if (!l.ParseFromString(head)) broken(file, "a broken field in the layer", lf.tag_at);
      name = l.name();
      type = l.type();
    } else {
      wavg_caffe::V1LayerParameter l;
      if (!l.ParseFromString(head)) broken(file, "a broken field in the layer", lf.tag_at);
      if (l.has_layer() && l.layer().blobs_size() > 0)
        fail(file, "layer " + l.name() + " is in the V0 layout (before 2014), which is not supported");
      name = l.name();
      v1_type = l.type();
    }
    if (blobs.empty()) continue;
    if (name.empty()) fail(file, "a layer with " + std::to_string(blobs.size()) + " blobs has no name");
    if (std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
      fail(file, "the layer name '" + name + "' holds a control character, which no tensor name may");
    if (!seen.insert(name).second) fail(file, "two layers with blobs are named " + name);
    out.layers.push_back({as_field(lf), name, type, out.tensors.size(), blobs.size()});
    for (std::size_t i = 0; i < blobs.size(); ++i) {
      wavg_caffe::BlobProto b;
      BlobValues v;
      out.blobs.push_back(walk_blob(data, blobs[i], b, v, file));
      const std::string tensor = name + "/" + std::to_string(i);
      out.tensors.push_back(blob_tensor(b, v, tensor, v1_type, static_cast<int>(i), file));
    }
  }
  return out;
}

}  // namespace wavg
