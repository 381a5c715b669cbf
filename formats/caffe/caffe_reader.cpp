// The Caffe reader (layout in caffe.hpp): the file is mapped, parsed whole by protobuf, and its blobs indexed;
// values are served from the parsed message's arrays.

#include <cstring>

#include "caffe/caffe.hpp"
#include "caffe/caffe_net.hpp"
#include "wavg/error.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg {

struct CaffeReader::Net {
  wavg_caffe::NetParameter message;
  CaffeBlobs index;
};

CaffeReader::CaffeReader(std::string path) : ListedReader(std::move(path), FormatId::caffe), m_net(std::make_unique<Net>()) {
  {
    const MappedFile file(m_path);
    parse_net(file.data(), file.size(), m_net->message, m_path);
  }
  m_net->index = index_blobs(m_net->message, m_path);
  m_tensors = m_net->index.tensors;
}

CaffeReader::~CaffeReader() = default;

std::string CaffeReader::layout() const {
  return m_net->index.layout == CaffeLayout::v1 ? "NetParameter, V1 layout (layers)"
                                                : "NetParameter, current layout (layer)";
}

std::map<std::string, std::string> CaffeReader::metadata() const {
  if (!m_net->message.has_name()) return {};
  return {{"name", m_net->message.name()}};
}

const wavg_caffe::NetParameter& CaffeReader::message() const { return m_net->message; }

const void* CaffeReader::view(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  WAVG_ASSERT(index < m_tensors.size() && offset + count <= m_tensors[index].count());
  const wavg_caffe::BlobProto& b = *m_net->index.blobs[index];
  if (m_tensors[index].dtype == DType::f64) return b.double_data().data() + offset;
  return b.data().data() + offset;
}

void CaffeReader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  if (count == 0) return;  // an empty blob's array has no storage: its data() is null
  std::memcpy(dst, view(index, offset, count), count * dtype_size(m_tensors[index].dtype));
}

}  // namespace wavg
