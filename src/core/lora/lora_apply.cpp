// Folding an adapter into its base (lora_apply.hpp). A read of an adapted weight covers whole rows: the base's rows
// are read, s * B[rows] * A added (for an embedding, whose factors peft stores transposed, s * A[:, rows]^T * B^T),
// each row rescaled to its DoRA magnitude where the adapter has one, and the asked range copied out. Only one
// module's factors are held at a time.

#include "wavg/lora_apply.hpp"

#include <unordered_map>

#include "lora_values.hpp"
#include "wavg/error.hpp"
#include "wavg/lora.hpp"

namespace wavg {

namespace {

struct Fold {
  std::size_t module = k_no_tensor;  // an adapted weight: its module in the adapter
  std::size_t saved = k_no_tensor;   // a saved module: its tensor in the adapter
  bool embedding = false;            // factors lora_embedding_A/B: the update is (B A)^T
};

std::string base_name(const std::string& adapter_name) {
  static const std::string k_prefix = "base_model.model.";
  return adapter_name.starts_with(k_prefix) ? adapter_name.substr(k_prefix.size()) : adapter_name;
}

class Folded final : public Reader {
 public:
  Folded(Reader& base, Reader& adapter) : m_base(base), m_adapter(adapter), m_folds(base.tensors().size()) {
    const LoraAdapter& a = *adapter.lora_adapter();
    std::unordered_map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < base.tensors().size(); ++i) index.emplace(base.tensors()[i].name, i);
    std::vector<Problem> problems;
    auto find = [&](const std::string& want, const std::string& what) -> std::size_t {
      const auto it = index.find(want);
      if (it == index.end()) {
        problems.push_back({base.path(), want + ": missing from the base (" + what + " of " + adapter.path() + ")"});
        return k_no_tensor;
      }
      return it->second;
    };
    for (std::size_t m = 0; m < a.modules.size(); ++m) {
      const LoraModule& mod = a.modules[m];
      const std::size_t i = find(base_name(mod.name) + ".weight", "the weight adapted by " + mod.name);
      if (i == k_no_tensor) continue;
      const Shape& as = adapter.tensors()[mod.a].shape;
      const Shape& bs = adapter.tensors()[mod.b].shape;
      const bool embedding = adapter.tensors()[mod.a].name.ends_with(".lora_embedding_A");
      const Shape want = embedding ? Shape{as[1], bs[0]} : Shape{bs[0], as[1]};
      const TensorInfo& w = base.tensors()[i];
      if (w.shape != want || !is_float(w.dtype))
        problems.push_back({base.path(), w.name + ": expected a float tensor of shape " + shape_string(want) +
                                             " (the factors of " + mod.name + "), found " +
                                             std::string(dtype_name(w.dtype)) + " " + shape_string(w.shape)});
      if (embedding && mod.magnitude != k_no_tensor)
        problems.push_back({adapter.path(), mod.name + ": a DoRA embedding, which wavg does not fold"});
      m_folds[i].module = m;
      m_folds[i].embedding = embedding;
    }
    for (std::size_t t = 0; t < adapter.tensors().size(); ++t) {
      const TensorInfo& s = adapter.tensors()[t];
      if (s.role != Role::saved_module) continue;
      const std::size_t i = find(base_name(s.name), "a module saved whole by modules_to_save");
      if (i == k_no_tensor) continue;
      const TensorInfo& w = base.tensors()[i];
      if (w.shape != s.shape || w.dtype != s.dtype)
        problems.push_back({adapter.path(), s.name + ": expected " + std::string(dtype_name(w.dtype)) + " " +
                                                shape_string(w.shape) + " (as the base's " + w.name + "), found " +
                                                std::string(dtype_name(s.dtype)) + " " + shape_string(s.shape)});
      m_folds[i].saved = t;
    }
    if (!problems.empty()) throw Error(ExitCode::incompatible, std::move(problems));
  }

  const std::string& path() const override { return m_base.path(); }
  std::vector<std::string> files() const override { return m_base.files(); }
  std::string format_name() const override { return m_base.format_name(); }
  std::string layout() const override { return m_base.layout(); }
  const std::vector<TensorInfo>& tensors() const override { return m_base.tensors(); }
  std::map<std::string, std::string> metadata() const override { return m_base.metadata(); }
  std::string model_config() const override { return m_base.model_config(); }
  ModelLayers model_layers() const override { return m_base.model_layers(); }
  std::vector<std::string> kept_entries() const override { return m_base.kept_entries(); }

  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override {
    const Fold& f = m_folds[index];
    if (f.saved != k_no_tensor) return m_adapter.read(f.saved, offset, count, dst);
    if (f.module == k_no_tensor) return m_base.read(index, offset, count, dst);
    load(f.module);
    const TensorInfo& t = m_base.tensors()[index];
    const std::uint64_t cols = t.shape[1];
    const std::uint64_t row0 = offset / cols, row1 = (offset + count + cols - 1) / cols;
    const auto n = static_cast<Eigen::Index>(row1 - row0);
    std::vector<double> values = read_values(m_base, index, row0 * cols, (row1 - row0) * cols);
    Eigen::Map<RowMat> w(values.data(), n, static_cast<Eigen::Index>(cols));
    const double s = m_adapter.lora_adapter()->modules[f.module].scale;
    const auto first = static_cast<Eigen::Index>(row0);
    if (f.embedding)
      w += s * (m_a.middleCols(first, n).transpose() * m_b.transpose());
    else
      w += s * (m_b.middleRows(first, n) * m_a);
    if (m_magnitude.size() > 0)
      for (Eigen::Index r = 0; r < n; ++r) w.row(r) *= m_magnitude[first + r] / w.row(r).norm();
    store_values(values.data() + (offset - row0 * cols), count, t.dtype, dst);
  }

  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override {
    const Fold& f = m_folds[index];
    return f.module == k_no_tensor && f.saved == k_no_tensor ? m_base.view(index, offset, count) : nullptr;
  }
  void release(std::size_t index, std::uint64_t offset, std::uint64_t count) override {
    m_base.release(index, offset, count);
  }

 private:
  // Reads module `m`'s factors (and DoRA magnitude) unless they are the ones held.
  void load(std::size_t m) {
    if (m_loaded == m) return;
    const LoraModule& mod = m_adapter.lora_adapter()->modules[m];
    m_a = read_matrix(m_adapter, mod.a);
    m_b = read_matrix(m_adapter, mod.b);
    m_magnitude.resize(0);
    if (mod.magnitude != k_no_tensor) {
      const std::vector<double> v =
          read_values(m_adapter, mod.magnitude, 0, m_adapter.tensors()[mod.magnitude].count());
      m_magnitude = Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
    }
    m_loaded = m;
  }

  Reader& m_base;
  Reader& m_adapter;
  std::vector<Fold> m_folds;  // per base tensor
  std::size_t m_loaded = k_no_tensor;
  Mat m_a, m_b;
  Eigen::VectorXd m_magnitude;
};

}  // namespace

std::unique_ptr<Reader> fold_lora(Reader& base, Reader& adapter) { return std::make_unique<Folded>(base, adapter); }

}  // namespace wavg
