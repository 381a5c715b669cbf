// The Caffe reader (layout in caffe.hpp): the file is mapped, parsed whole by protobuf, and its blobs indexed;
// values are served from the parsed message's arrays. A BatchNorm layer's statistics are served normalised, as
// caffe.hpp says why: its mean and variance blobs times Caffe's factor (blob 2 == 0 ? 0 : 1 / blob 2), computed in
// double, and blob 2 as 1.

#include <algorithm>
#include <cstring>

#include "caffe/caffe.hpp"
#include "caffe/caffe_net.hpp"
#include "wavg/error.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg {

namespace {

// How read() serves a tensor: its stored values, its stored values times a factor, or ones.
enum class Serve { stored, scaled, one };

struct Served {
  Serve how = Serve::stored;
  double factor = 1.0;
};

double first_value(const wavg_caffe::BlobProto& b) { return b.double_data_size() > 0 ? b.double_data(0) : b.data(0); }

template <typename T>
void scale_into(const T* src, std::uint64_t count, double factor, void* dst) {
  T* out = static_cast<T*>(dst);
  for (std::uint64_t i = 0; i < count; ++i) out[i] = static_cast<T>(static_cast<double>(src[i]) * factor);
}

}  // namespace

struct CaffeReader::Net {
  wavg_caffe::NetParameter message;
  CaffeBlobs index;
  std::vector<Served> served;  // per tensor
};

CaffeReader::CaffeReader(std::string path)
    : ListedReader(std::move(path), FormatId::caffe), m_net(std::make_unique<Net>()) {
  {
    const MappedFile file(m_path);
    parse_net(file.data(), file.size(), m_net->message, m_path);
  }
  m_net->index = index_blobs(m_net->message, m_path);
  m_tensors = m_net->index.tensors;
  m_net->served.assign(m_tensors.size(), Served{});
  // A .caffemodel holds the net's blobs only (a solver's state is its own .solverstate file): every blob is a
  // weight but a BatchNorm layer's statistics. index_blobs lists the current layout's layers first, in file order;
  // V1's layer types have no BatchNorm.
  for (TensorInfo& t : m_tensors) t.role = Role::weight;
  std::size_t first = 0;
  for (const auto& l : m_net->message.layer()) {
    const auto n = static_cast<std::size_t>(l.blobs_size());
    if (l.type() == "BatchNorm" && n > 0) normalise_batch_norm(l.name(), first, n);
    first += n;
  }
}

void CaffeReader::normalise_batch_norm(const std::string& layer, std::size_t first, std::size_t n) {
  if (n < 3 || m_tensors[first + 2].count() != 1)
    fail(m_path, "BatchNorm layer " + layer + " holds " + std::to_string(n) + " blobs" +
                     (n < 3 ? "" : " and its blob 2 " + std::to_string(m_tensors[first + 2].count()) + " values") +
                     "; Caffe's holds a mean, a variance and a 1-value moving-average factor");
  WAVG_ASSERT(m_tensors[first].name == layer + "/0");
  const double s = first_value(*m_net->index.blobs[first + 2]);
  const double factor = s == 0 ? 0.0 : 1.0 / s;  // as Caffe's BatchNormLayer::Forward_cpu
  for (std::size_t i = first; i < first + 3; ++i) m_tensors[i].role = Role::buffer;
  if (s == 1.0) return;  // already normalised: served as stored
  m_net->served[first] = m_net->served[first + 1] = Served{Serve::scaled, factor};
  m_net->served[first + 2] = Served{Serve::one, 1.0};
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
  if (m_net->served[index].how != Serve::stored) return nullptr;
  return stored(index, offset);
}

const void* CaffeReader::stored(std::size_t index, std::uint64_t offset) const {
  const wavg_caffe::BlobProto& b = *m_net->index.blobs[index];
  if (m_tensors[index].dtype == DType::f64) return b.double_data().data() + offset;
  return b.data().data() + offset;
}

void CaffeReader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  WAVG_ASSERT(index < m_tensors.size() && offset + count <= m_tensors[index].count());
  if (count == 0) return;  // an empty blob's array has no storage: its data() is null
  const bool f64 = m_tensors[index].dtype == DType::f64;
  const Served& s = m_net->served[index];
  if (s.how == Serve::stored) {
    std::memcpy(dst, stored(index, offset), count * dtype_size(m_tensors[index].dtype));
  } else if (s.how == Serve::one) {
    if (f64)
      std::fill_n(static_cast<double*>(dst), count, 1.0);
    else
      std::fill_n(static_cast<float*>(dst), count, 1.0f);
  } else if (f64) {
    scale_into(static_cast<const double*>(stored(index, offset)), count, s.factor, dst);
  } else {
    scale_into(static_cast<const float*>(stored(index, offset)), count, s.factor, dst);
  }
}

}  // namespace wavg
