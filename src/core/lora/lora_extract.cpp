// Extracting a LoRA adapter (lora_extract.hpp).
//
// Each adapted module's update is dW = W_tuned - W_base (out x in). Its SVD dW = U S V^T, cut to the K = min(R, out,
// in) largest singular values, is the best rank-K approximation of dW in the Frobenius norm (Eckart-Young), and the
// adapter stores it split evenly between the factors: B = U_K sqrt(S_K / s) (out x K), A = sqrt(S_K / s) V_K^T
// (K x in), so that s B A is that approximation. The config gives lora_alpha = R, so s = R / K: 1 for every module of
// full rank R. A module of fewer rows or columns than R gets its own rank in rank_pattern. -v reports, per module,
// the share of ||dW||_F^2 the cut discards, sum_{j>K} S_j^2 / sum_j S_j^2.
//
// Which tensors: every 2-D float tensor named MODULE.weight is a module: an embedding table where PEFT would find
// an nn.Embedding (peft's lora_embedding_A (K x vocabulary) and lora_embedding_B (dim x K), whose product is dW's
// transpose, so the SVD is of dW^T), else a linear layer. The checkpoint does not store a module's class, so the
// model's config.json decides by shape (a table of vocab_size, max_position_embeddings or type_vocab_size rows by
// hidden_size, outside the layers, not the output head: a tied head is the embedding's storage, an untied one a
// Linear), else the known architectures' names (embeddings.hpp). Modules are named as
// peft names them, "base_model.model." before the module's path. Any other tensor (a norm's scale, a bias) is no
// LoRA factor: one that differs from the base is left out of the adapter, and the notes count them.
//
// The SVD is of one whole module in double (Eigen's divide-and-conquer BDCSVD), so memory is that of the largest
// module, 8 bytes a value, a few times over; only the module being read is held.

#include "wavg/lora_extract.hpp"

#include <Eigen/SVD>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "lora_values.hpp"
#include "wavg/error.hpp"
#include "wavg/lora.hpp"

namespace wavg {

namespace {

constexpr const char* k_prefix = "base_model.model.";

struct Module {
  std::string name;      // the module's path in the model (without peft's prefix)
  std::size_t tensor{};  // its weight, in both readers
  bool embedding = false;
  std::uint64_t rank = 0;
  std::uint64_t rows = 0, cols = 0;  // of the matrix the SVD cuts: dW, or dW^T for an embedding
};

class Extracted final : public LoraExtract {
 public:
  Extracted(Reader& base, Reader& tuned, std::uint64_t rank, const std::optional<EmbeddingShapes>& shapes)
      : m_base(base), m_tuned(tuned), m_rank(rank) {
    std::unordered_map<std::string, std::size_t> in_base;
    for (std::size_t i = 0; i < base.tensors().size(); ++i) in_base.emplace(base.tensors()[i].name, i);
    std::vector<Problem> problems;
    std::vector<std::size_t> others;
    for (std::size_t i = 0; i < tuned.tensors().size(); ++i) {
      const TensorInfo& t = tuned.tensors()[i];
      const auto it = in_base.find(t.name);
      if (it == in_base.end()) {
        problems.push_back({base.path(), t.name + ": missing (present in " + tuned.path() + ")"});
        continue;
      }
      const TensorInfo& b = base.tensors()[it->second];
      if (b.shape != t.shape || b.dtype != t.dtype)
        problems.push_back({tuned.path(), t.name + ": expected " + std::string(dtype_name(b.dtype)) + " " +
                                              shape_string(b.shape) + " (as the base's), found " +
                                              std::string(dtype_name(t.dtype)) + " " + shape_string(t.shape)});
      m_base_index.push_back(it->second);
      if (t.shape.size() == 2 && is_float(t.dtype) && t.name.ends_with(".weight") && t.name.size() > 7) {
        Module m{.name = t.name.substr(0, t.name.size() - 7), .tensor = i};
        m.embedding = is_embedding_table(t.name, t.shape[0], t.shape[1], shapes);
        m.rows = m.embedding ? t.shape[1] : t.shape[0];
        m.cols = m.embedding ? t.shape[0] : t.shape[1];
        m.rank = std::min({m_rank, m.rows, m.cols});
        m_modules.push_back(m);
      } else {
        others.push_back(i);
      }
    }
    if (!problems.empty()) throw Error(ExitCode::incompatible, std::move(problems));
    if (m_modules.empty()) fail(tuned.path(), "holds no 2-D float weight (NAME.weight) to extract an adapter of");
    note_others(others);
    plan_output();
  }

  const std::string& path() const override { return m_tuned.path(); }
  std::string format_name() const override { return "LoRA extraction"; }
  std::string layout() const override { return m_tuned.layout(); }
  const std::vector<TensorInfo>& tensors() const override { return m_tensors; }
  std::map<std::string, std::string> metadata() const override { return {}; }
  const std::vector<std::string>& notes() const override { return m_notes; }
  const LoraAdapter* lora_adapter() const override { return &m_out; }
  std::string describe() const override {
    return "LoRA extracted: the difference from the base, truncated SVD to rank " + std::to_string(m_rank);
  }

  std::string config_text() const override {
    nlohmann::ordered_json targets = nlohmann::ordered_json::array(), ranks = nlohmann::ordered_json::object();
    for (const Module& m : m_modules) {
      targets.push_back(m.name);
      if (m.rank != m_rank) ranks[m.name] = m.rank;  // the plain name: peft finds it whether it matches or compares
    }
    const nlohmann::ordered_json doc = {
        {"peft_type", "LORA"},           {"base_model_name_or_path", m_base.path()},
        {"r", m_rank},                   {"lora_alpha", m_rank},
        {"rank_pattern", ranks},         {"alpha_pattern", nlohmann::ordered_json::object()},
        {"target_modules", targets},     {"modules_to_save", nullptr},
        {"use_rslora", false},           {"use_dora", false},
        {"lora_dropout", 0.0},           {"bias", "none"},
        {"fan_in_fan_out", false},       {"init_lora_weights", true},
        {"inference_mode", true},        {"task_type", nullptr},
        {"revision", nullptr}};
    return doc.dump(2) + "\n";
  }

  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override {
    const std::size_t m = index / 2;
    compute(m);
    const RowMat& f = index % 2 == 0 ? m_a : m_b;
    store_values(f.data() + offset, count, m_tensors[index].dtype, dst);
  }

 private:
  // Counts the tensors besides the modules that differ from the base: no LoRA factor holds them.
  void note_others(const std::vector<std::size_t>& others) {
    std::size_t differ = 0;
    std::string first;
    for (const std::size_t i : others) {
      const TensorInfo& t = m_tuned.tensors()[i];
      std::vector<unsigned char> a(t.bytes()), b(t.bytes());
      m_tuned.read(i, 0, t.count(), a.data());
      m_base.read(m_base_index[i], 0, t.count(), b.data());
      if (a == b) continue;
      if (differ++ == 0) first = t.name;
    }
    if (differ)
      m_notes.push_back(std::to_string(differ) + " tensor(s) differ from the base but are no 2-D weight (first: " +
                        first + "): the adapter does not hold them");
  }

  // Two output tensors per module, A then B, in the fine-tune's order.
  void plan_output() {
    m_out.r = m_rank;
    m_out.alpha = static_cast<double>(m_rank);
    m_out.base_model = m_base.path();
    for (const Module& m : m_modules) {
      const TensorInfo& w = m_tuned.tensors()[m.tensor];
      const std::string name = k_prefix + m.name;
      const DType dtype = w.dtype;
      m_tensors.push_back({.name = name + (m.embedding ? ".lora_embedding_A" : ".lora_A.weight"),
                           .dtype = dtype,
                           .shape = {m.rank, m.cols},
                           .role = Role::lora_a});
      m_tensors.push_back({.name = name + (m.embedding ? ".lora_embedding_B" : ".lora_B.weight"),
                           .dtype = dtype,
                           .shape = {m.rows, m.rank},
                           .role = Role::lora_b});
      const double alpha = static_cast<double>(m_rank);
      m_out.target_modules.push_back(m.name);
      m_out.modules.push_back({.name = name,
                               .rank = m.rank,
                               .alpha = alpha,
                               .scale = lora_scale(alpha, m.rank, false),
                               .a = m_tensors.size() - 2,
                               .b = m_tensors.size() - 1});
    }
  }

  // Computes module `m`'s factors into m_a and m_b (see the top of this file).
  void compute(std::size_t m) {
    if (m_cached == m) return;
    const Module& mod = m_modules[m];
    const Mat d = read_matrix(m_tuned, mod.tensor) - read_matrix(m_base, m_base_index[mod.tensor]);
    const Eigen::BDCSVD<Mat> svd(mod.embedding ? Mat(d.transpose()) : d, Eigen::ComputeThinU | Eigen::ComputeThinV);
    const Eigen::VectorXd& s = svd.singularValues();
    const auto k = static_cast<Eigen::Index>(mod.rank);
    const double scale = m_out.modules[m].scale;
    const Eigen::VectorXd root = (s.head(k) / scale).cwiseSqrt();
    m_b = svd.matrixU().leftCols(k) * root.asDiagonal();
    m_a = root.asDiagonal() * svd.matrixV().leftCols(k).transpose();
    m_cached = m;
    if (m_noted.size() <= m) m_noted.resize(m_modules.size(), false);
    if (m_noted[m]) return;
    m_noted[m] = true;
    const double all = s.squaredNorm(), kept = s.head(k).squaredNorm();
    char buf[48];
    std::snprintf(buf, sizeof buf, "%g", all > 0 ? (all - kept) / all : 0.0);
    m_notes.push_back(k_prefix + mod.name + ": rank " + std::to_string(mod.rank) + ", discarded energy " + buf +
                      " of ||dW||^2");
  }

  Reader& m_base;
  Reader& m_tuned;
  std::uint64_t m_rank;
  std::vector<std::size_t> m_base_index;  // per tensor of the fine-tune: the base's
  std::vector<Module> m_modules;
  std::vector<TensorInfo> m_tensors;
  LoraAdapter m_out;
  std::vector<std::string> m_notes;
  std::vector<bool> m_noted;  // per module: its note made
  std::size_t m_cached = k_no_tensor;
  RowMat m_a, m_b;
};

}  // namespace

std::unique_ptr<LoraExtract> extract_lora(Reader& base, Reader& tuned, std::uint64_t rank,
                                          const std::optional<EmbeddingShapes>& shapes) {
  return std::make_unique<Extracted>(base, tuned, rank, shapes);
}

}  // namespace wavg
