// The ONNX reader (layout in onnx.hpp): the model file is mapped and parsed once (onnx_model.cpp); values are served
// from raw_data or an external file's mapping as they lie, and converted from a typed field.

#include <algorithm>
#include <cstring>

#include "common/byte_cursor.hpp"
#include "formats/onnx/onnx_subset.pb.h"
#include "onnx/onnx.hpp"
#include "onnx/onnx_model.hpp"
#include "wavg/error.hpp"

namespace wavg {

OnnxReader::OnnxReader(std::string path) : ListedReader(std::move(path), FormatId::onnx) {
  const MappedFile file(m_path);
  m_model = std::make_unique<OnnxModel>(parse_onnx(m_path, file.data(), file.size()));
  m_tensors = m_model->tensors;
  const auto& p = *m_model->proto;
  for (const auto& e : p.metadata_props()) m_metadata[e.key()] = e.value();
  m_layout = "ModelProto, IR version " + std::to_string(p.ir_version());
  if (!p.producer_name().empty())
    m_layout += ", from " + p.producer_name() + (p.producer_version().empty() ? "" : " " + p.producer_version());
  if (!m_model->external.empty()) m_layout += ", external data";
}

OnnxReader::~OnnxReader() = default;

std::vector<std::string> OnnxReader::files() const {
  std::vector<std::string> out{m_path};
  out.insert(out.end(), m_model->external_paths.begin(), m_model->external_paths.end());
  return out;
}

const OnnxModel& OnnxReader::model() const { return *m_model; }

const void* OnnxReader::view(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  WAVG_ASSERT(index < m_tensors.size() && offset + count <= m_tensors[index].count());
  const OnnxTensor& w = m_model->where[index];
  if (w.stored == OnnxStored::typed || !w.bytes || count == 0) return nullptr;
  return w.bytes + offset * dtype_size(m_tensors[index].dtype);
}

void OnnxReader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  WAVG_ASSERT(index < m_tensors.size() && offset + count <= m_tensors[index].count());
  if (count == 0) return;
  const OnnxTensor& w = m_model->where[index];
  if (w.stored == OnnxStored::typed) return read_typed(*w.proto, m_tensors[index].dtype, offset, count, dst);
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  std::memcpy(dst, w.bytes + offset * elem, count * elem);
}

void OnnxReader::release(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const OnnxTensor& w = m_model->where[index];
  if (w.stored != OnnxStored::external || count == 0) return;
  const MappedFile& f = m_model->external[w.file];
  const std::uint64_t at = static_cast<std::uint64_t>(w.bytes - f.data()), elem = dtype_size(m_tensors[index].dtype);
  f.release(at + offset * elem, at + (offset + count) * elem);
}

void OnnxReader::prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const OnnxTensor& w = m_model->where[index];
  if (w.stored != OnnxStored::external || count == 0) return;
  const MappedFile& f = m_model->external[w.file];
  const std::uint64_t at = static_cast<std::uint64_t>(w.bytes - f.data()), elem = dtype_size(m_tensors[index].dtype);
  f.prefetch(at + offset * elem, at + (offset + count) * elem);
}

bool looks_like_onnx(const SniffInput& input) {
  // ModelProto's top-level fields, each checked against the file's end: 1 ir_version (a varint, written first by
  // every ONNX writer), then 2-6 strings and numbers, 7 graph, 8 opset_import, 14 metadata_props, 20
  // training_info, 25 functions, 26 configuration. A graph must be among them.
  const auto bytes = input.bytes();
  ByteCursor c(input.path(), bytes.data(), bytes.size());
  std::uint64_t tag = 0, v = 0;
  if (!c.varint(tag) || tag != (1 << 3 | 0) || !c.varint(v) || v == 0 || v > 100) return false;
  bool graph = false;
  while (c.left() > 0) {
    if (!c.varint(tag)) return false;
    const std::uint64_t field = tag >> 3, type = tag & 7;
    const bool varint_field = field == 1 || field == 5;
    const bool bytes_field = (field >= 2 && field <= 4) || (field >= 6 && field <= 8) || field == 14 ||
                             field == 20 || field == 25 || field == 26;
    if (type == 0 && varint_field) {
      if (!c.varint(v)) return false;
      continue;
    }
    if (type != 2 || !bytes_field || !c.varint(v) || v > c.left()) return false;
    graph = graph || field == 7;
    c.skip(v);
  }
  return graph;
}

}  // namespace wavg
