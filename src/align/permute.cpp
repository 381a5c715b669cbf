// Permuting tensors and whole models: the gather behind weight matching, MergeMany and the aligned outputs.

#include "align/permute.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "wavg/element_math.hpp"
#include "wavg/error.hpp"

namespace wavg::align {

IndexMap axis_map(const AxisPerm& axis, const std::vector<Perm>& perms, std::uint64_t length) {
  if (axis.group < 0) return {};
  const Perm& p = perms[static_cast<std::size_t>(axis.group)];
  IndexMap map(length);
  const std::uint64_t n = p.size(), inner = axis.inner;
  WAVG_ASSERT(length == axis.outer * n * inner);
  for (std::uint64_t o = 0; o < axis.outer; ++o)
    for (std::uint64_t c = 0; c < n; ++c)
      for (std::uint64_t s = 0; s < inner; ++s) map[(o * n + c) * inner + s] = (o * n + p[c]) * inner + s;
  return map;
}

// dst[i0, i1, ...] = src[map0[i0], map1[i1], ...] for elements of `elem` bytes; an empty map is the identity.
void permute_bytes(const unsigned char* src, unsigned char* dst, const Shape& shape, std::size_t elem,
                   const std::vector<IndexMap>& maps) {
  const std::size_t rank = shape.size();
  if (rank == 0) {
    std::memcpy(dst, src, elem);
    return;
  }
  std::vector<std::uint64_t> stride(rank, 1);
  for (std::size_t a = rank - 1; a-- > 0;) stride[a] = stride[a + 1] * shape[a + 1];
  std::uint64_t rows = 1;
  for (std::size_t a = 0; a + 1 < rank; ++a) rows *= shape[a];
  const std::uint64_t cols = shape[rank - 1];
  if (rows == 0 || cols == 0) return;
  const IndexMap& last = maps[rank - 1];
  std::vector<std::uint64_t> idx(rank, 0);
  for (std::uint64_t r = 0; r < rows; ++r) {
    std::uint64_t from = 0;
    for (std::size_t a = 0; a + 1 < rank; ++a) from += (maps[a].empty() ? idx[a] : maps[a][idx[a]]) * stride[a];
    const unsigned char* s = src + from * elem;
    unsigned char* d = dst + r * cols * elem;
    if (last.empty())
      std::memcpy(d, s, cols * elem);
    else if (elem == 4)
      for (std::uint64_t c = 0; c < cols; ++c) std::memcpy(d + 4 * c, s + 4 * last[c], 4);
    else
      for (std::uint64_t c = 0; c < cols; ++c) std::memcpy(d + elem * c, s + elem * last[c], elem);
    for (std::size_t a = rank - 1; a-- > 0;) {  // the odometer over every axis but the last
      if (++idx[a] < shape[a]) break;
      idx[a] = 0;
    }
  }
}

std::vector<IndexMap> tensor_maps(const TensorPerm& tp, const Shape& shape, const std::vector<Perm>& perms,
                                  std::size_t except_axis) {
  std::vector<IndexMap> maps(shape.size());
  for (std::size_t a = 0; a < shape.size(); ++a)
    if (a != except_axis) maps[a] = axis_map(tp.axes[a], perms, shape[a]);
  return maps;
}

Perm identity(std::uint64_t n) {
  Perm p(n);
  for (std::uint64_t i = 0; i < n; ++i) p[i] = static_cast<std::uint32_t>(i);
  return p;
}

std::vector<Perm> identity_perms(const PermSpec& spec) {
  std::vector<Perm> out;
  for (std::uint64_t n : spec.group_sizes) out.push_back(identity(n));
  return out;
}

std::size_t moved(const Perm& perm) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < perm.size(); ++i) n += perm[i] != i;
  return n;
}

std::uint64_t Weights::count(std::size_t t) const {
  std::uint64_t n = 1;
  for (const std::uint64_t d : shapes[t]) n *= d;
  return n;
}

void Weights::release(std::size_t t) const {
  if (is_mapped(t)) reader->release(t, 0, count(t));
}

namespace {

template <DType T>
void to_float(const unsigned char* raw, std::uint64_t n, float* out) {
  for (std::uint64_t k = 0; k < n; ++k) out[k] = static_cast<float>(load<T>(raw, k));
}

}  // namespace

Weights load_weights(Reader& reader, const PermSpec& spec) {
  Weights w;
  const auto& infos = reader.tensors();
  WAVG_ASSERT(infos.size() == spec.tensors.size());
  w.tensors.resize(infos.size());
  w.mapped.assign(infos.size(), nullptr);
  w.shapes.resize(infos.size());
  w.reader = &reader;
  std::vector<unsigned char> raw;
  for (std::size_t i = 0; i < infos.size(); ++i) {
    const TensorInfo& t = infos[i];
    w.shapes[i] = t.shape;
    if (!spec.tensors[i].permuted() || spec.tensors[i].role != Role::parameter) continue;
    const std::uint64_t n = t.count();
    if (t.dtype == DType::f32 && n > 0) {
      // Weight matching reads the floats in place (Eigen, plain float loads): a view at an address that is not a
      // multiple of 4 (Reader::view lends any) is copied below instead.
      const void* view = reader.view(i, 0, n);
      if (view && reinterpret_cast<std::uintptr_t>(view) % alignof(float) == 0) {
        w.mapped[i] = static_cast<const float*>(view);
        continue;
      }
      if (view) reader.release(i, 0, n);
    }
    raw.resize(t.bytes());
    reader.read(i, 0, n, raw.data());
    std::vector<float>& out = w.tensors[i];
    out.resize(n);
    switch (t.dtype) {
      case DType::f16: to_float<DType::f16>(raw.data(), n, out.data()); break;
      case DType::bf16: to_float<DType::bf16>(raw.data(), n, out.data()); break;
      case DType::f32: to_float<DType::f32>(raw.data(), n, out.data()); break;
      case DType::f64: to_float<DType::f64>(raw.data(), n, out.data()); break;
      default: WAVG_ASSERT(false);
    }
  }
  return w;
}

Weights permute_weights(const PermSpec& spec, const Weights& weights, const std::vector<Perm>& perms) {
  Weights out;
  out.shapes = weights.shapes;
  out.tensors.resize(weights.shapes.size());
  for (std::size_t t = 0; t < spec.tensors.size(); ++t) {
    if (!weights.holds(t)) continue;
    const Shape& shape = weights.shapes[t];
    std::vector<float>& to = out.tensors[t];
    to.resize(weights.count(t));
    if (!spec.tensors[t].permuted()) {
      std::copy_n(weights.data(t), to.size(), to.data());
      continue;
    }
    permute_bytes(reinterpret_cast<const unsigned char*>(weights.data(t)), reinterpret_cast<unsigned char*>(to.data()),
                  shape, sizeof(float), tensor_maps(spec.tensors[t], shape, perms, shape.size()));
  }
  return out;
}

namespace {

class PermutedReader final : public Reader {
 public:
  PermutedReader(Reader& base, const PermSpec& spec, std::vector<Perm> perms)
      : m_base(base), m_spec(spec), m_perms(std::move(perms)) {}
  const std::string& path() const override { return m_base.path(); }
  FormatId format() const override { return m_base.format(); }
  std::string format_name() const override { return m_base.format_name(); }
  std::string layout() const override { return m_base.layout(); }
  const std::vector<TensorInfo>& tensors() const override { return m_base.tensors(); }
  std::map<std::string, std::string> metadata() const override { return m_base.metadata(); }

  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override {
    if (!m_spec.tensors[index].permuted()) return m_base.read(index, offset, count, dst);
    const TensorInfo& t = m_base.tensors()[index];
    const std::size_t elem = dtype_size(t.dtype);
    if (m_cached != index) {
      std::vector<unsigned char> raw(t.bytes());
      m_base.read(index, 0, t.count(), raw.data());
      m_bytes.resize(raw.size());
      permute_bytes(raw.data(), m_bytes.data(), t.shape, elem,
                    tensor_maps(m_spec.tensors[index], t.shape, m_perms, t.shape.size()));
      m_cached = index;
    }
    WAVG_ASSERT(offset + count <= t.count());
    std::memcpy(dst, m_bytes.data() + offset * elem, count * elem);
  }

 private:
  Reader& m_base;
  PermSpec m_spec;
  std::vector<Perm> m_perms;
  std::size_t m_cached = static_cast<std::size_t>(-1);
  std::vector<unsigned char> m_bytes;  // the permuted tensor m_cached
};

}  // namespace

std::unique_ptr<Reader> permuted_reader(Reader& base, const PermSpec& spec, std::vector<Perm> perms) {
  return std::make_unique<PermutedReader>(base, spec, std::move(perms));
}

}  // namespace wavg::align
