// SharedViews (shared_views.hpp): overlapping views of input 1's storages in a .pt output.

#include "pytorch/shared_views.hpp"

#include <algorithm>
#include <cstring>

#include "wavg/error.hpp"

namespace wavg::pytorch {

namespace {

// The most bytes of overlapping views watched in one storage: a copy of them and an owner per element are kept.
constexpr std::uint64_t k_max_region = 64ull << 20;

bool repeats_elements(const TensorInfo& t, const OutputView& v) {
  if (v.contiguous) return false;
  for (std::size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] > 1 && (*v.stride)[d] == 0) return true;
  return false;
}

bool same_view(const TensorInfo& a, const OutputView& va, const TensorInfo& b, const OutputView& vb) {
  return va.begin == vb.begin && a.dtype == b.dtype && a.shape == b.shape && va.contiguous == vb.contiguous &&
         (va.contiguous || *va.stride == *vb.stride);
}

}  // namespace

SharedViews::SharedViews(const std::vector<TensorInfo>& tensors, std::vector<OutputView> views, std::string display,
                         std::string input1)
    : m_tensors(tensors),
      m_views(std::move(views)),
      m_region_of(tensors.size(), k_none),
      m_written(tensors.size(), false),
      m_display(std::move(display)),
      m_input1(std::move(input1)) {
  // Each view's extent: from its first element to one past its last (a strided view's extent may hold gaps).
  std::vector<std::uint64_t> hi(tensors.size(), 0);
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const TensorInfo& t = tensors[i];
    if (t.count() == 0) continue;
    std::uint64_t span = t.count();
    if (!m_views[i].contiguous) {
      span = 1;
      for (std::size_t d = 0; d < t.shape.size(); ++d) span += (t.shape[d] - 1) * (*m_views[i].stride)[d];
    }
    hi[i] = m_views[i].begin + span * dtype_size(t.dtype);
    order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return m_views[a].begin != m_views[b].begin ? m_views[a].begin < m_views[b].begin : a < b;
  });
  // Clusters of views whose extents overlap (one storage each: storages never overlap in the file).
  for (std::size_t c = 0; c < order.size();) {
    std::size_t end = c + 1;
    std::uint64_t cluster_hi = hi[order[c]];
    while (end < order.size() && m_views[order[end]].begin < cluster_hi) cluster_hi = std::max(cluster_hi, hi[order[end++]]);
    const std::size_t first = order[c];
    std::size_t other = first;  // a view of the cluster other than `first`'s view, if any
    bool watch = repeats_elements(tensors[first], m_views[first]);
    for (std::size_t k = c + 1; k < end; ++k) {
      const std::size_t i = order[k];
      watch = watch || repeats_elements(tensors[i], m_views[i]);
      if (tensors[i].dtype != tensors[first].dtype)
        refuse(first, i, "views of one storage with different dtypes in " + m_input1);
      if (other == first && !same_view(tensors[first], m_views[first], tensors[i], m_views[i])) other = i;
    }
    watch = watch || other != first;
    if (watch) {
      const std::uint64_t lo = m_views[first].begin;
      if (cluster_hi - lo > k_max_region)
        refuse(first, other,
               "views of one storage in " + m_input1 + " that overlap over " + std::to_string(cluster_hi - lo) +
                   " bytes, more than wavg checks (" + std::to_string(k_max_region >> 20) + " MiB)");
      Region r;
      r.lo = lo;
      r.hi = cluster_hi;
      r.elem = dtype_size(tensors[first].dtype);
      r.shadow.resize(cluster_hi - lo);
      r.owner.assign((cluster_hi - lo) / r.elem, k_none);
      r.original = m_views[first].original;
      for (std::size_t k = c; k < end; ++k) m_region_of[order[k]] = static_cast<std::uint32_t>(m_regions.size());
      m_regions.push_back(std::move(r));
    }
    c = end;
  }
}

std::uint64_t SharedViews::element_at(std::size_t index, std::uint64_t flat) const {
  const OutputView& v = m_views[index];
  if (v.contiguous) return flat;
  const auto& shape = m_tensors[index].shape;
  std::uint64_t at = 0;
  for (std::size_t d = shape.size(); d-- > 0;) {
    at += (flat % shape[d]) * (*v.stride)[d];
    flat /= shape[d];
  }
  return at;
}

void SharedViews::before_write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) {
  Region& r = m_regions[m_region_of[index]];
  const auto* in = static_cast<const unsigned char*>(src);
  const std::uint64_t from = m_views[index].begin - r.lo;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t pos = from + element_at(index, offset + i) * r.elem;
    const std::uint32_t owner = r.owner[pos / r.elem];
    if (owner != k_none && std::memcmp(r.shadow.data() + pos, in + i * r.elem, r.elem) != 0)
      refuse(index, owner, "views of one storage in " + m_input1 + " whose results differ on elements they share");
    std::memcpy(r.shadow.data() + pos, in + i * r.elem, r.elem);
    r.owner[pos / r.elem] = static_cast<std::uint32_t>(index);
  }
  m_written[index] = true;
}

void SharedViews::at_finish() const {
  for (std::size_t index = 0; index < m_tensors.size(); ++index) {
    if (!watched(index) || m_written[index]) continue;
    const Region& r = m_regions[m_region_of[index]];
    const std::uint64_t from = m_views[index].begin - r.lo;
    for (std::uint64_t i = 0; i < m_tensors[index].count(); ++i) {
      const std::uint64_t pos = from + element_at(index, i) * r.elem;
      const std::uint32_t owner = r.owner[pos / r.elem];
      if (owner != k_none && std::memcmp(r.shadow.data() + pos, r.original + pos, r.elem) != 0)
        refuse(index, owner, "views of one storage in " + m_input1 + " whose results differ on elements they share (" +
                                 m_tensors[index].name + " keeps input 1's values)");
    }
  }
}

void SharedViews::refuse(std::size_t a, std::size_t b, const std::string& why) const {
  const std::string names = a == b ? m_tensors[a].name + " (a view that repeats elements of its storage)"
                                   : std::min(m_tensors[a].name, m_tensors[b].name) + " and " +
                                         std::max(m_tensors[a].name, m_tensors[b].name);
  throw Error(ExitCode::incompatible, m_display,
              names + ": " + why + "; a .pt output keeps input 1's storages, so one result would overwrite the "
                                   "other: write .safetensors, which holds them apart");
}

}  // namespace wavg::pytorch
