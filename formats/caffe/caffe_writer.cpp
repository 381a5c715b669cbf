// The Caffe writer (layout in caffe.hpp): input 1's NetParameter, or a new one from the output's names, is held in
// memory with every blob sized; the engine's blocks land in the blobs' arrays and finish() serialises it once.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <map>

#include "caffe/caffe.hpp"
#include "caffe/caffe_net.hpp"
#include "wavg/error.hpp"

namespace wavg {

namespace {

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

class CaffeWriter final : public Writer {
 public:
  CaffeWriter(const std::string& tmp_path, const std::string& display_path, const OutputSpec& spec)
      : m_tmp(tmp_path), m_display(display_path), m_spec(spec) {
    for (const TensorInfo& t : spec.tensors)
      if (t.dtype != DType::f32 && t.dtype != DType::f64)
        fail(m_display, t.name + ": Caffe blobs hold float32 or float64, not " + std::string(dtype_name(t.dtype)));
      else if (t.count() > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
        fail(m_display, t.name + ": " + std::to_string(t.count()) + " values are more than a Caffe blob can hold");
    const auto* in = dynamic_cast<const CaffeReader*>(spec.template_input);
    if (in) {
      keep_template(*in);
    } else {
      build_current_layout();
    }
    for (std::size_t i = 0; i < spec.tensors.size(); ++i) {
      wavg_caffe::BlobProto& b = *m_blobs[i];
      const auto count = static_cast<int>(spec.tensors[i].count());
      if (spec.tensors[i].dtype == DType::f64) {
        b.clear_data();
        b.mutable_double_data()->Resize(count, 0.0);
      } else {
        b.clear_double_data();
        b.mutable_data()->Resize(count, 0.0f);
      }
    }
  }

  bool holds_template_values(std::size_t index) const override { return m_holds_template[index]; }

  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    wavg_caffe::BlobProto& b = *m_blobs[index];
    const std::size_t elem = dtype_size(m_spec.tensors[index].dtype);
    void* dst = m_spec.tensors[index].dtype == DType::f64 ? static_cast<void*>(b.mutable_double_data()->mutable_data())
                                                          : static_cast<void*>(b.mutable_data()->mutable_data());
    std::memcpy(static_cast<char*>(dst) + offset * elem, src, count * elem);
  }

  void finish() override {
    if (m_net.ByteSizeLong() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      fail(m_display, "the NetParameter would exceed 2 GiB, the most a protobuf message can hold");
    const int fd = ::open(m_tmp.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) fail(m_display, std::strerror(errno));
    const bool ok = m_net.SerializeToFileDescriptor(fd);
    const int e = errno;
    if (::close(fd) != 0 || !ok) fail(m_display, std::string("write failed: ") + std::strerror(ok ? errno : e));
  }

 private:
  // Takes input 1's message and finds the output's blobs in it by name; every blob of input 1 must be written.
  void keep_template(const CaffeReader& in) {
    if (!m_spec.dropped.empty())
      fail(m_display, "blob " + m_spec.dropped.front() +
                          " of input 1 would be left out, and a Caffe layer cannot lose one of its blobs");
    m_net.CopyFrom(in.message());
    const CaffeBlobs index = index_blobs(m_net, in.path());
    std::map<std::string, std::size_t> by_name;
    for (std::size_t i = 0; i < index.tensors.size(); ++i) by_name[index.tensors[i].name] = i;
    for (const TensorInfo& t : m_spec.tensors) {
      const auto it = by_name.find(t.name);
      WAVG_ASSERT(it != by_name.end() && index.tensors[it->second].count() == t.count());
      m_blobs.push_back(index.blobs[it->second]);
      m_holds_template.push_back(index.tensors[it->second].dtype == t.dtype);
    }
  }

  // Writes the current layout: one layer per LAYER/ prefix, in order of first appearance, with its blobs.
  void build_current_layout() {
    std::map<std::string, wavg_caffe::LayerParameter*> layers;
    std::map<wavg_caffe::LayerParameter*, int> blob_counts;
    std::vector<std::pair<wavg_caffe::LayerParameter*, std::size_t>> places;
    for (const TensorInfo& t : m_spec.tensors) {
      std::string layer;
      std::size_t index = 0;
      if (!split_name(t.name, layer, index))
        fail(m_display, t.name + ": a Caffe blob is named LAYER/INDEX (conv1/0); this name has no such form");
      auto& l = layers[layer];
      if (!l) {
        l = m_net.add_layer();
        l->set_name(layer);
      }
      places.emplace_back(l, index);
      ++blob_counts[l];
    }
    for (auto& [l, n] : blob_counts)
      for (int i = 0; i < n; ++i) l->add_blobs();
    for (std::size_t i = 0; i < places.size(); ++i) {
      auto [l, index] = places[i];
      if (index >= static_cast<std::size_t>(l->blobs_size()))
        fail(m_display, m_spec.tensors[i].name + ": layer " + l->name() + " has " + std::to_string(l->blobs_size()) +
                            " blobs, so its indices run from 0 to " + std::to_string(l->blobs_size() - 1));
      wavg_caffe::BlobProto* b = l->mutable_blobs(static_cast<int>(index));
      if (b->has_shape()) fail(m_display, m_spec.tensors[i].name + " appears twice");
      auto* shape = b->mutable_shape();
      for (std::uint64_t d : m_spec.tensors[i].shape) shape->add_dim(static_cast<std::int64_t>(d));
      m_blobs.push_back(b);
      m_holds_template.push_back(false);
    }
  }

  std::string m_tmp;
  std::string m_display;
  const OutputSpec& m_spec;
  wavg_caffe::NetParameter m_net;
  std::vector<wavg_caffe::BlobProto*> m_blobs;  // per output tensor
  std::vector<bool> m_holds_template;
};

}  // namespace

std::unique_ptr<Writer> create_caffe_writer(const std::string& tmp_path, const std::string& display_path,
                                            const OutputSpec& spec) {
  return std::make_unique<CaffeWriter>(tmp_path, display_path, spec);
}

}  // namespace wavg
