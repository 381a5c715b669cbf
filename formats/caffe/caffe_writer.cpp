// The Caffe writer (layout in caffe.hpp): the whole output is laid out from the OutputSpec before any value arrives,
// as a list of pieces, the bytes around the blobs' values (input 1's, or a new net's) and one place per output
// tensor for its packed values; the file is sized once, those bytes written, and every block written in place with
// pwrite(). Nothing but the bytes around the values is held in memory.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <map>

#include "caffe/caffe.hpp"
#include "caffe/caffe_net.hpp"
#include "caffe/caffe_wire.hpp"
#include "file_writer.hpp"
#include "wavg/error.hpp"
#include "wavg/file_io.hpp"

namespace wavg {

namespace {

constexpr std::size_t k_none = static_cast<std::size_t>(-1);

// Splits LAYER/INDEX at the last '/'; returns false when there is none or INDEX is not a plain number.
bool split_name(const std::string& name, std::string& layer, std::size_t& index) {
  const auto slash = name.rfind('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == name.size() || name.size() - slash > 7) return false;
  index = 0;
  for (std::size_t i = slash + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    index = index * 10 + static_cast<std::size_t>(name[i] - '0');
  }
  if (name[slash + 1] == '0' && name.size() - slash > 2) return false;
  layer = name.substr(0, slash);
  return true;
}

// A piece of the output: bytes as they are, or the packed values of output tensor `tensor` (`bytes` long).
struct Piece {
  std::string literal;
  std::size_t tensor = k_none;
  std::uint64_t bytes = 0;
};

class Pieces {
 public:
  void bytes(const std::string& b) {
    if (b.empty()) return;
    if (m_list.empty() || m_list.back().tensor != k_none) m_list.emplace_back();
    m_list.back().literal += b;
    m_size += b.size();
  }
  void bytes(const unsigned char* p, std::uint64_t begin, std::uint64_t end) {
    bytes(std::string(reinterpret_cast<const char*>(p + begin), end - begin));
  }
  void varint(std::uint64_t v) {
    std::string s;
    caffe_wire::put_varint(s, v);
    bytes(s);
  }
  // Appends a length-delimited field's tag and length, then `inner`.
  void field(std::uint64_t number, Pieces&& inner) {
    varint(number << 3 | 2);
    varint(inner.m_size);
    for (Piece& p : inner.m_list)
      if (p.tensor == k_none) {
        bytes(p.literal);
      } else {
        m_list.push_back(std::move(p));
        m_size += m_list.back().bytes;
      }
  }
  // Appends the data (float32) or double_data (float64) field of tensor `index`, none for no values.
  void values(std::size_t index, const TensorInfo& t) {
    if (t.count() == 0) return;
    varint((t.dtype == DType::f64 ? 8u : 5u) << 3 | 2);
    varint(t.bytes());
    m_list.push_back({{}, index, t.bytes()});
    m_size += t.bytes();
  }
  std::uint64_t size() const { return m_size; }
  const std::vector<Piece>& list() const { return m_list; }

 private:
  std::vector<Piece> m_list;
  std::uint64_t m_size = 0;
};

// The values the engine would copy from input 1 are written like any other (FileWriter holds no template values): a
// BatchNorm layer's statistics are read normalised, which input 1's stored bytes are not.
class CaffeWriter final : public FileWriter {
 public:
  CaffeWriter(const std::string& tmp_path, const std::string& display_path, const OutputSpec& spec)
      : FileWriter(display_path, spec) {
    for (const TensorInfo& t : spec.tensors)
      if (t.dtype != DType::f32 && t.dtype != DType::f64)
        fail(m_display, t.name + ": Caffe blobs hold float32 or float64, not " + std::string(dtype_name(t.dtype)));
      else if (t.count() > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
        fail(m_display, t.name + ": " + std::to_string(t.count()) + " values are more than a Caffe blob can hold");
    const auto* in = dynamic_cast<const CaffeReader*>(spec.template_input);
    const Pieces out = in ? from_template(*in) : current_layout();
    if (out.size() > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
      fail(m_display, "the NetParameter would exceed 2 GiB, the most a protobuf message can hold");

    open_output(tmp_path, O_WRONLY);
    size_output(out.size());
    m_data_at.assign(spec.tensors.size(), 0);
    std::uint64_t at = 0;
    for (const Piece& p : out.list()) {
      if (p.tensor == k_none) {
        pwrite_all(m_fd, p.literal.data(), p.literal.size(), at, m_display);
        at += p.literal.size();
      } else {
        m_data_at[p.tensor] = at;
        at += p.bytes;
      }
    }
  }

 private:
  // Input 1's bytes with the output's values in place of its blobs' (each blob found by name); every blob of input
  // 1 must be written.
  Pieces from_template(const CaffeReader& in) {
    if (!m_spec.dropped.empty())
      fail(m_display, "blob " + m_spec.dropped.front() +
                          " of input 1 would be left out, and a Caffe layer cannot lose one of its blobs");
    const CaffeIndex& index = in.index();
    const unsigned char* p = in.bytes();
    std::map<std::string, std::size_t> by_name;
    for (std::size_t i = 0; i < m_spec.tensors.size(); ++i) by_name[m_spec.tensors[i].name] = i;
    WAVG_ASSERT(by_name.size() == index.tensors.size());
    const bool v1 = index.layout == CaffeLayout::v1;
    Pieces out;
    std::uint64_t copied = 0;
    for (const CaffeLayer& l : index.layers) {
      out.bytes(p, copied, l.field.tag_at);
      Pieces layer;
      std::uint64_t from = l.field.at;
      for (std::size_t k = l.first; k < l.first + l.count; ++k) {
        const CaffeBlob& b = index.blobs[k];
        const auto it = by_name.find(index.tensors[k].name);
        WAVG_ASSERT(it != by_name.end() && m_spec.tensors[it->second].count() == index.tensors[k].count());
        layer.bytes(p, from, b.field.tag_at);
        Pieces blob;
        std::uint64_t at = b.field.at;
        for (const CaffeField& d : b.data_fields) {
          blob.bytes(p, at, d.tag_at);
          if (&d == &b.data_fields.front()) blob.values(it->second, m_spec.tensors[it->second]);  // its place
          at = d.end;
        }
        blob.bytes(p, at, b.field.end);
        if (b.data_fields.empty()) blob.values(it->second, m_spec.tensors[it->second]);
        layer.field(v1 ? 6 : 7, std::move(blob));
        from = b.field.end;
      }
      layer.bytes(p, from, l.field.end);
      out.field(v1 ? 2 : 100, std::move(layer));
      copied = l.field.end;
    }
    out.bytes(p, copied, index.size);
    return out;
  }

  // The current layout: one layer per LAYER/ prefix, in order of first appearance, with its blobs.
  Pieces current_layout() {
    std::map<std::string, std::size_t> layer_of;
    std::vector<std::string> names;
    std::vector<std::vector<std::size_t>> blobs;  // per layer, the output tensor of each blob
    std::vector<std::pair<std::size_t, std::size_t>> places;
    for (const TensorInfo& t : m_spec.tensors) {
      std::string layer;
      std::size_t index = 0;
      if (!split_name(t.name, layer, index))
        fail(m_display, t.name + ": a Caffe blob is named LAYER/INDEX (conv1/0); this name has no such form");
      const auto [it, added] = layer_of.emplace(layer, names.size());
      if (added) {
        names.push_back(layer);
        blobs.emplace_back();
      }
      places.emplace_back(it->second, index);
      blobs[it->second].push_back(k_none);
    }
    for (std::size_t i = 0; i < places.size(); ++i) {
      auto [l, index] = places[i];
      if (index >= blobs[l].size())
        fail(m_display, m_spec.tensors[i].name + ": layer " + names[l] + " has " + std::to_string(blobs[l].size()) +
                            " blobs, so its indices run from 0 to " + std::to_string(blobs[l].size() - 1));
      if (blobs[l][index] != k_none) fail(m_display, m_spec.tensors[i].name + " appears twice");
      blobs[l][index] = i;
    }
    Pieces out;
    for (std::size_t l = 0; l < names.size(); ++l) {
      Pieces layer;
      layer.varint(1 << 3 | 2);
      layer.varint(names[l].size());
      layer.bytes(names[l]);
      for (std::size_t i : blobs[l]) {
        const TensorInfo& t = m_spec.tensors[i];
        // A BlobProto's fields in protobuf's order: data (5), shape (7), double_data (8).
        std::string dims;
        for (std::uint64_t d : t.shape) caffe_wire::put_varint(dims, d);
        Pieces shape, blob;
        if (!dims.empty()) {
          shape.varint(1 << 3 | 2);
          shape.varint(dims.size());
          shape.bytes(dims);
        }
        if (t.dtype == DType::f32) blob.values(i, t);
        blob.field(7, std::move(shape));
        if (t.dtype == DType::f64) blob.values(i, t);
        layer.field(7, std::move(blob));
      }
      out.field(100, std::move(layer));
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Writer> create_caffe_writer(const std::string& tmp_path, const std::string& display_path,
                                            const OutputSpec& spec) {
  return std::make_unique<CaffeWriter>(tmp_path, display_path, spec);
}

}  // namespace wavg
