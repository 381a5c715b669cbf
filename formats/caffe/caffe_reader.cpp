// The Caffe reader (layout in caffe.hpp): the file is mapped and walked once to index its blobs (caffe_net.cpp);
// values are served from the mapping, a packed run as it lies (view) when aligned, otherwise gathered. A BatchNorm
// layer's statistics are served normalised, as caffe.hpp says why: its mean and variance blobs times Caffe's factor
// (blob 2 == 0 ? 0 : 1 / blob 2), computed in the blobs' dtype as Caffe computes it, and blob 2 as 1.

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
  double factor = 1.0;  // a float32 layer's: a float, held exactly
};

// Caffe's caffe_cpu_scale: each value times the factor, in T (a float32 product rounded once, as Caffe's float net).
template <typename T>
void scale_in_place(void* values, std::uint64_t count, double factor) {
  T* v = static_cast<T*>(values);
  const T f = static_cast<T>(factor);
  for (std::uint64_t i = 0; i < count; ++i) v[i] = v[i] * f;
}

// Returns the run of `runs` holding value `offset` (runs are in order and cover every value).
const CaffeRun& run_of(const std::vector<CaffeRun>& runs, std::uint64_t offset) {
  auto it = std::upper_bound(runs.begin(), runs.end(), offset,
                             [](std::uint64_t o, const CaffeRun& r) { return o < r.first; });
  WAVG_ASSERT(it != runs.begin());
  --it;
  WAVG_ASSERT(offset - it->first < it->count);
  return *it;
}

}  // namespace

struct CaffeReader::Net {
  explicit Net(const std::string& path) : file(path) {}
  MappedFile file;
  CaffeIndex index;
  std::vector<Served> served;  // per tensor
};

CaffeReader::CaffeReader(std::string path)
    : ListedReader(std::move(path), FormatId::caffe), m_net(std::make_unique<Net>(m_path)) {
  m_net->index = index_net(m_net->file.data(), m_net->file.size(), m_path);
  m_tensors = m_net->index.tensors;
  m_net->served.assign(m_tensors.size(), Served{});
  // A .caffemodel holds the net's blobs only (a solver's state is its own .solverstate file): every blob is a
  // weight but a BatchNorm layer's statistics. V1's layer types have no BatchNorm.
  for (TensorInfo& t : m_tensors) t.role = Role::weight;
  for (const CaffeLayer& l : m_net->index.layers)
    if (l.type == "BatchNorm") normalise_batch_norm(l.name, l.first, l.count);
}

void CaffeReader::normalise_batch_norm(const std::string& layer, std::size_t first, std::size_t n) {
  if (n < 3 || m_tensors[first + 2].count() != 1)
    fail(m_path, "BatchNorm layer " + layer + " holds " + std::to_string(n) + " blobs" +
                     (n < 3 ? "" : " and its blob 2 " + std::to_string(m_tensors[first + 2].count()) + " values") +
                     "; Caffe's holds a mean, a variance and a 1-value moving-average factor");
  WAVG_ASSERT(m_tensors[first].name == layer + "/0");
  double s = 0;
  if (m_tensors[first + 2].dtype == DType::f64) {
    gather(first + 2, 0, 1, &s);
  } else {
    float f = 0;
    gather(first + 2, 0, 1, &f);
    s = f;
  }
  // As Caffe's BatchNormLayer<Dtype>::Forward_cpu: scale_factor = 1 / s in Dtype (float for float32 blobs).
  double factor = s == 0 ? 0.0 : 1.0 / s;
  if (m_tensors[first].dtype == DType::f32) factor = s == 0 ? 0.0f : 1.0f / static_cast<float>(s);
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
  if (!m_net->index.has_name) return {};
  return {{"name", m_net->index.name}};
}

const CaffeIndex& CaffeReader::index() const { return m_net->index; }

const unsigned char* CaffeReader::bytes() const { return m_net->file.data(); }

const void* CaffeReader::view(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  WAVG_ASSERT(index < m_tensors.size() && offset + count <= m_tensors[index].count());
  if (m_net->served[index].how != Serve::stored || count == 0) return nullptr;
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  const CaffeRun& r = run_of(m_net->index.blobs[index].runs, offset);
  const std::uint64_t at = r.at + (offset - r.first) * elem;
  // A packed field lies at any byte offset, which the kernels take; an unpacked one is gathered by read().
  if (r.stride != elem || offset + count > r.first + r.count) return nullptr;
  return m_net->file.data() + at;
}

std::pair<std::uint64_t, std::uint64_t> CaffeReader::byte_range(std::size_t index, std::uint64_t offset,
                                                                std::uint64_t count) const {
  const auto& runs = m_net->index.blobs[index].runs;
  const CaffeRun& a = run_of(runs, offset);
  const CaffeRun& b = run_of(runs, offset + count - 1);
  return {a.at + (offset - a.first) * a.stride, b.at + (offset + count - 1 - b.first) * b.stride + b.stride};
}

void CaffeReader::release(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  if (count == 0) return;
  const auto [begin, end] = byte_range(index, offset, count);
  m_net->file.release(begin, end);
}

void CaffeReader::prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  if (count == 0) return;
  const auto [begin, end] = byte_range(index, offset, count);
  m_net->file.prefetch(begin, end);
}

void CaffeReader::gather(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) const {
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  const auto& runs = m_net->index.blobs[index].runs;
  auto* out = static_cast<unsigned char*>(dst);
  const unsigned char* file = m_net->file.data();
  for (const CaffeRun* r = &run_of(runs, offset); count > 0; ++r) {
    WAVG_ASSERT(r != runs.data() + runs.size());
    const std::uint64_t skip = offset - r->first, n = std::min(count, r->count - skip);
    const unsigned char* src = file + r->at + skip * r->stride;
    if (r->stride == elem) {
      std::memcpy(out, src, n * elem);
    } else {
      for (std::uint64_t i = 0; i < n; ++i) std::memcpy(out + i * elem, src + i * r->stride, elem);
    }
    out += n * elem;
    offset += n;
    count -= n;
  }
}

void CaffeReader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  WAVG_ASSERT(index < m_tensors.size() && offset + count <= m_tensors[index].count());
  if (count == 0) return;
  const bool f64 = m_tensors[index].dtype == DType::f64;
  const Served& s = m_net->served[index];
  if (s.how == Serve::one) {
    if (f64)
      std::fill_n(static_cast<double*>(dst), count, 1.0);
    else
      std::fill_n(static_cast<float*>(dst), count, 1.0f);
    return;
  }
  gather(index, offset, count, dst);
  if (s.how != Serve::scaled) return;
  if (f64)
    scale_in_place<double>(dst, count, s.factor);
  else
    scale_in_place<float>(dst, count, s.factor);
}

}  // namespace wavg
