// Aggregating LoRA adapters (lora_merge.hpp).
//
// Client i's adapter changes a module W by dW_i = s_i B_i A_i, with A_i (r_i x in), B_i (out x r_i) and its scale
// s_i (lora_alpha / r_i, or / sqrt(r_i) with rsLoRA). With weights w_i summing to 1, the mean update is
//
//   dW = sum_i w_i s_i B_i A_i,
//
// and the averaged model W + dW is what averaging the clients' merged models gives. The methods:
//
// exact (FLoRA's stacking). dW is itself a product of stacked factors: A = [A_1; ...; A_n] (R x in, R = sum r_i)
//   and B = [c_1 B_1, ..., c_n B_n] with c_i = w_i s_i / s, s being the output's scale (input 1's lora_alpha over
//   the new rank R). Then s B A = dW exactly: the output is an adapter of rank R.
//
// svd:K. The same dW re-factored to rank K <= R by truncated SVD, without forming dW (out x in, which may be large):
//   with the thin QR factorisations B' = Qb Rb (B' = [w_1 s_1 B_1, ...]) and A^T = Qa Ra, dW = Qb (Rb Ra^T) Qa^T,
//   and the SVD of the small R x R matrix Rb Ra^T = U S V^T gives dW = (Qb U) S (Qa V)^T. Keeping the K largest
//   singular values, B = Qb U_K sqrt(S_K / s) and A = sqrt(S_K / s) V_K^T Qa^T, so s B A is the best rank-K
//   approximation of dW (Eckart-Young); the discarded energy sum_{j>K} S_j^2 / sum_j S_j^2 is the share of
//   ||dW||_F^2 lost, reported per module with -v.
//
// factorwise (FedIT, the common practice). A = sum w_i A_i and B = sum w_i B_i, which needs equal ranks and scales
//   and is not the mean update: s B A - dW = s (sum_ij w_i w_j B_i A_j - sum_i w_i B_i A_i) is not zero unless the
//   clients agree. Its relative error ||dW - s B A||_F / ||dW||_F is computed the same low-rank way (the norm of a
//   product P Q is ||Rp Rq^T||_F) and reported per module with -v.
//
// frozen-a (FFA-LoRA). When every client's A is the same, bit for bit (A frozen at its shared initialisation), the
//   mean update is s (sum w_i B_i) A: only B is averaged, and the result is exact. A differing A is refused.
//
// Tensors besides the factors (modules_to_save's whole modules) are averaged with the same weights: for a whole
// module the mean is the mean model's.
//
// DoRA. Client i's module is m_i * (W + dW_i) / ||W + dW_i||, the norm taken over each output row: a magnitude
// vector m_i (one value per row) times a direction, the row-normalised W + dW_i. That is not linear in anything the
// adapter holds, so no adapter is the mean of the clients' models; the aggregate averages each part on its own
// instead, the way DoRA separates them: the magnitude m = sum w_i m_i, and the direction's update dW by the method
// above (exact, svd:K, factorwise, frozen-a), giving m * (W + dW) / ||W + dW||. With equal magnitudes and exact it
// is the model whose direction update is the mean one; describe() says that it is not the mean model. DoRA and
// plain LoRA adapters are not mixed.
//
// Every sum runs over the inputs in order, in double, so the result is the same for any thread count. exact,
// factorwise and frozen-a compute each block of a factor as it is read, from the same block of the clients' factors
// (exact's A is their rows, copied as they lie where the dtypes agree; its B each row's clients side by side): the
// merge streams at about the speed of reading the adapters. svd computes a module's factors when first read and
// keeps only the last module's, so memory stays that of one module; factorwise's -v error reads the module whole.

#include "wavg/lora_merge.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "lora_values.hpp"
#include "wavg/error.hpp"

namespace wavg {

namespace {

// The R of the thin QR factorisation m = Q R, min(rows, cols) x cols, upper triangular.
Mat thin_r(const Eigen::HouseholderQR<Mat>& qr) {
  const Eigen::Index k = std::min(qr.rows(), qr.cols());
  return qr.matrixQR().topRows(k).triangularView<Eigen::Upper>();
}

Mat thin_r(const Mat& m) { return thin_r(Eigen::HouseholderQR<Mat>(m)); }

// The Q of the thin QR factorisation m = Q R: rows x min(rows, cols), orthonormal columns.
Mat thin_q(const Eigen::HouseholderQR<Mat>& qr) {
  return qr.householderQ() * Mat::Identity(qr.rows(), std::min(qr.rows(), qr.cols()));
}

// ||P Q||_F without forming P Q: with P = Qp Rp and Q^T = Qq Rq, P Q = Qp (Rp Rq^T) Qq^T, and orthonormal
// columns keep the norm.
double product_norm(const Mat& p, const Mat& q) { return (thin_r(p) * thin_r(q.transpose()).transpose()).norm(); }

struct Client {
  std::size_t a = 0, b = 0;
  std::uint64_t rank = 0;
  double scale = 0;
};

struct ModulePlan {
  std::string name;
  std::vector<Client> clients;  // one per input
  std::uint64_t rank = 0;       // the output's
  double scale = 0;             // the output's
  std::size_t out_a = 0, out_b = 0;
};

// What an output tensor is: a factor of a module, or the weighted mean of a tensor every input holds.
struct Source {
  enum class Kind { a, b, mean } kind = Kind::mean;
  std::size_t module = 0;          // a, b
  std::vector<std::size_t> index;  // mean: the tensor in each input
};

const LoraModule* find_module(const LoraAdapter& a, const std::string& name) {
  for (const LoraModule& m : a.modules)
    if (m.name == name) return &m;
  return nullptr;
}

std::string sorted_list(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out + "]";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

class Aggregate final : public LoraAggregate {
 public:
  Aggregate(const std::vector<Reader*>& adapters, std::vector<double> weights, const LoraMerge& how)
      : m_inputs(adapters), m_weights(std::move(weights)), m_how(how) {
    check_configs();
    plan_modules();
    m_path = adapters.front()->path();
  }

  const std::string& path() const override { return m_path; }
  std::string format_name() const override { return "LoRA aggregate"; }
  std::string layout() const override { return m_inputs.front()->layout(); }
  const std::vector<TensorInfo>& tensors() const override { return m_tensors; }
  std::map<std::string, std::string> metadata() const override { return m_inputs.front()->metadata(); }
  const std::vector<std::string>& notes() const override { return m_notes; }
  const LoraAdapter* lora_adapter() const override { return &m_out; }

  std::string describe() const override {
    const std::string method = describe_method();
    if (!m_out.dora) return method;
    return "DoRA: magnitudes averaged, the direction's update by " + method +
           "; not the mean model (DoRA is not linear)";
  }

  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override {
    const Source& s = m_sources[index];
    const DType dtype = m_tensors[index].dtype;
    if (s.kind == Source::Kind::mean) return read_mean(s.index, offset, count, dtype, dst);
    const ModulePlan& p = m_modules[s.module];
    const bool a = s.kind == Source::Kind::a;
    std::vector<std::size_t> factors;
    for (const Client& c : p.clients) factors.push_back(a ? c.a : c.b);
    switch (m_how.method) {
      case LoraMethod::exact:
        if (a) return read_stacked_a(p, offset, count, dtype, dst);
        return read_stacked_b(p, offset, count, dtype, dst);
      case LoraMethod::factorwise:
        if (m_how.notes == LoraNotes::all) note_factorwise_error(s.module);
        return read_mean(factors, offset, count, dtype, dst);
      case LoraMethod::frozen_a:
        if (a) return m_inputs[0]->read(factors[0], offset, count, dst);  // input 1's A, which every client has
        return read_mean(factors, offset, count, dtype, dst);
      case LoraMethod::svd: {
        compute_svd(s.module);
        const RowMat& m = a ? m_a : m_b;
        return store_values(m.data() + offset, count, dtype, dst);
      }
    }
  }

 private:
  // What the factors of each module are.
  std::string describe_method() const {
    switch (m_how.method) {
      case LoraMethod::exact: return "LoRA exact: the mean update, factors stacked";
      case LoraMethod::svd: return "LoRA svd:" + std::to_string(m_how.rank) + ": the mean update, truncated SVD";
      case LoraMethod::factorwise: return "LoRA factorwise: A and B averaged each on its own, not the mean update";
      case LoraMethod::frozen_a: return "LoRA frozen-a: the shared A, B averaged (exact)";
    }
    return {};
  }

  const LoraAdapter& adapter(std::size_t k) const { return *m_inputs[k]->lora_adapter(); }

  // Every difference between input 1's config and modules and another's, and what the method needs.
  void check_configs() {
    std::vector<Problem> problems;
    const LoraAdapter& first = adapter(0);
    const std::string& p1 = m_inputs[0]->path();
    auto differ = [&](std::size_t k, const std::string& what, const std::string& want, const std::string& found) {
      problems.push_back({m_inputs[k]->path(), what + ": expected " + want + " (as " + p1 + "), found " + found});
    };
    const bool same_rank = m_how.method == LoraMethod::factorwise || m_how.method == LoraMethod::frozen_a;
    for (std::size_t k = 1; k < m_inputs.size(); ++k) {
      const LoraAdapter& a = adapter(k);
      if (a.base_model != first.base_model) differ(k, "base_model_name_or_path", first.base_model, a.base_model);
      if (a.dora != first.dora)
        differ(k, "use_dora (DoRA and plain LoRA adapters do not merge)", first.dora ? "true" : "false",
               a.dora ? "true" : "false");
      if (sorted_list(a.target_modules) != sorted_list(first.target_modules))
        differ(k, "target_modules", sorted_list(first.target_modules), sorted_list(a.target_modules));
      if (sorted_list(a.modules_to_save) != sorted_list(first.modules_to_save))
        differ(k, "modules_to_save", sorted_list(first.modules_to_save), sorted_list(a.modules_to_save));
      if (a.modules.size() != first.modules.size())
        differ(k, "adapted modules", std::to_string(first.modules.size()), std::to_string(a.modules.size()));
      for (const LoraModule& m1 : first.modules) {
        const LoraModule* m = find_module(a, m1.name);
        if (!m) {
          problems.push_back({m_inputs[k]->path(), m1.name + ": not adapted (adapted in " + p1 + ")"});
          continue;
        }
        const Shape& in1 = m_inputs[0]->tensors()[m1.a].shape;
        const Shape& out1 = m_inputs[0]->tensors()[m1.b].shape;
        const Shape& in = m_inputs[k]->tensors()[m->a].shape;
        const Shape& out = m_inputs[k]->tensors()[m->b].shape;
        if (in[1] != in1[1] || out[0] != out1[0])
          differ(k, m1.name + ": module of " + std::to_string(out1[0]) + " x " + std::to_string(in1[1]), "it",
                 std::to_string(out[0]) + " x " + std::to_string(in[1]));
        if (same_rank && m->rank != m1.rank)
          differ(k, m1.name + ": rank (" + lora_merge_name(m_how) + " needs equal ranks; exact takes any)",
                 std::to_string(m1.rank), std::to_string(m->rank));
        if (same_rank && m->scale != m1.scale)
          differ(k,
                 m1.name + ": scale lora_alpha/r (" + lora_merge_name(m_how) + " needs equal scales; exact takes any)",
                 number(m1.scale), number(m->scale));
      }
    }
    if (problems.empty() && m_how.method == LoraMethod::frozen_a) check_frozen_a(problems);
    if (!problems.empty()) throw Error(ExitCode::incompatible, std::move(problems));
  }

  // FFA-LoRA's premise: every client's A is input 1's, bit for bit. Names the first module where one differs.
  void check_frozen_a(std::vector<Problem>& problems) {
    for (const LoraModule& m1 : adapter(0).modules) {
      const TensorInfo& t1 = m_inputs[0]->tensors()[m1.a];
      std::vector<unsigned char> want(t1.bytes()), found;
      m_inputs[0]->read(m1.a, 0, t1.count(), want.data());
      for (std::size_t k = 1; k < m_inputs.size(); ++k) {
        const LoraModule& m = *find_module(adapter(k), m1.name);
        const TensorInfo& t = m_inputs[k]->tensors()[m.a];
        found.assign(t.bytes(), 0);
        m_inputs[k]->read(m.a, 0, t.count(), found.data());
        if (t.dtype != t1.dtype || found != want) {
          problems.push_back({m_inputs[k]->path(), m1.name + ": its A differs from " + m_inputs[0]->path() +
                                                       "'s; frozen-a needs every client's A identical (use exact)"});
          return;
        }
      }
    }
  }

  // The output's tensors in input 1's order, each factor with its new rank, and each module's output scale.
  void plan_modules() {
    if (m_weights.empty()) m_weights.assign(m_inputs.size(), 1.0);
    double total = 0;
    for (double w : m_weights) total += w;
    for (double& w : m_weights) w /= total;
    const LoraAdapter& first = adapter(0);
    // The output's structure: input 1's config, each module with its new rank and scale.
    m_out = first;
    m_out.modules.clear();
    std::map<std::size_t, std::pair<std::size_t, Source::Kind>> factor_of;  // input 1's tensor -> module, A or B
    std::map<std::size_t, std::size_t> magnitude_of;  // input 1's DoRA magnitude -> module (averaged as it is)
    for (const LoraModule& m1 : first.modules) {
      ModulePlan p;
      p.name = m1.name;
      for (std::size_t k = 0; k < m_inputs.size(); ++k) {
        const LoraModule& m = *find_module(adapter(k), m1.name);
        p.clients.push_back({m.a, m.b, m.rank, m.scale});
      }
      std::uint64_t sum = 0;
      for (const Client& c : p.clients) sum += c.rank;
      const std::uint64_t in = m_inputs[0]->tensors()[m1.a].shape[1], out = m_inputs[0]->tensors()[m1.b].shape[0];
      switch (m_how.method) {
        case LoraMethod::exact: p.rank = sum; break;
        case LoraMethod::svd: p.rank = std::min({m_how.rank, sum, in, out}); break;
        default: p.rank = m1.rank;
      }
      p.scale = lora_scale(m1.alpha, p.rank, first.rslora);
      m_out.modules.push_back({.name = m1.name, .rank = p.rank, .alpha = m1.alpha, .scale = p.scale});
      factor_of[m1.a] = {m_modules.size(), Source::Kind::a};
      factor_of[m1.b] = {m_modules.size(), Source::Kind::b};
      if (m1.magnitude != k_no_tensor) magnitude_of[m1.magnitude] = m_modules.size();
      m_modules.push_back(std::move(p));
    }
    std::vector<std::map<std::string, std::size_t>> by_name(m_inputs.size());
    for (std::size_t k = 0; k < m_inputs.size(); ++k)
      for (std::size_t i = 0; i < m_inputs[k]->tensors().size(); ++i) by_name[k][m_inputs[k]->tensors()[i].name] = i;
    std::vector<Problem> problems;
    for (std::size_t i = 0; i < m_inputs[0]->tensors().size(); ++i) {
      TensorInfo t = m_inputs[0]->tensors()[i];
      Source s;
      if (const auto f = factor_of.find(i); f != factor_of.end()) {
        s.kind = f->second.second;
        s.module = f->second.first;
        ModulePlan& p = m_modules[s.module];
        if (s.kind == Source::Kind::a) {
          t.shape[0] = p.rank;
          p.out_a = m_out.modules[s.module].a = m_tensors.size();
        } else {
          t.shape[1] = p.rank;
          p.out_b = m_out.modules[s.module].b = m_tensors.size();
        }
      } else {
        if (const auto g = magnitude_of.find(i); g != magnitude_of.end())
          m_out.modules[g->second].magnitude = m_tensors.size();
        if (!is_float(t.dtype)) {
          problems.push_back({m_inputs[0]->path(), t.name + ": a " + std::string(dtype_name(t.dtype)) +
                                                       " tensor in an adapter, which wavg averages only when float"});
          continue;
        }
        for (std::size_t k = 0; k < m_inputs.size(); ++k) {
          const auto it = by_name[k].find(t.name);
          if (it == by_name[k].end()) {
            problems.push_back({m_inputs[k]->path(), t.name + ": missing (present in " + m_inputs[0]->path() + ")"});
            break;
          }
          const TensorInfo& o = m_inputs[k]->tensors()[it->second];
          if (o.shape != t.shape || o.dtype != t.dtype)
            problems.push_back({m_inputs[k]->path(), t.name + ": expected " + std::string(dtype_name(t.dtype)) + " " +
                                                         shape_string(t.shape) + ", found " +
                                                         std::string(dtype_name(o.dtype)) + " " +
                                                         shape_string(o.shape)});
          s.index.push_back(it->second);
        }
      }
      m_tensors.push_back(std::move(t));
      m_sources.push_back(std::move(s));
    }
    if (!problems.empty()) throw Error(ExitCode::incompatible, std::move(problems));
  }

  // The weighted mean of tensor index[k] of each input k, summed in input order.
  void read_mean(const std::vector<std::size_t>& index, std::uint64_t offset, std::uint64_t count, DType dtype,
                 void* dst) {
    std::vector<double> sum(count, 0.0);
    for (std::size_t k = 0; k < m_inputs.size(); ++k) {
      const std::vector<double> v = read_values(*m_inputs[k], index[k], offset, count);
      for (std::uint64_t i = 0; i < count; ++i) sum[i] += m_weights[k] * v[i];
    }
    store_values(sum.data(), count, dtype, dst);
  }

  // exact's A, the clients' A stacked (rows of client 1, then client 2, ...): each client's rows copied as they are
  // stored where its dtype is the output's.
  void read_stacked_a(const ModulePlan& p, std::uint64_t offset, std::uint64_t count, DType dtype, void* dst) {
    const std::uint64_t end = offset + count, in = m_inputs[0]->tensors()[p.clients[0].a].shape[1];
    auto* out = static_cast<unsigned char*>(dst);
    std::uint64_t start = 0;
    for (std::size_t k = 0; k < m_inputs.size(); start += p.clients[k].rank * in, ++k) {
      const std::uint64_t lo = std::max(offset, start), hi = std::min(end, start + p.clients[k].rank * in);
      if (lo >= hi) continue;
      unsigned char* at = out + (lo - offset) * dtype_size(dtype);
      if (m_inputs[k]->tensors()[p.clients[k].a].dtype == dtype) {
        m_inputs[k]->read(p.clients[k].a, lo - start, hi - lo, at);
      } else {
        const std::vector<double> v = read_values(*m_inputs[k], p.clients[k].a, lo - start, hi - lo);
        store_values(v.data(), hi - lo, dtype, at);
      }
    }
  }

  // exact's B, [c_1 B_1, ..., c_n B_n] with c_k = w_k s_k / s: each output row is the clients' rows side by side.
  // Reads the rows the range touches from each client once.
  void read_stacked_b(const ModulePlan& p, std::uint64_t offset, std::uint64_t count, DType dtype, void* dst) {
    const std::uint64_t width = p.rank, first = offset / width, last = (offset + count - 1) / width;
    std::vector<std::vector<double>> rows(m_inputs.size());
    for (std::size_t k = 0; k < m_inputs.size(); ++k)
      rows[k] =
          read_values(*m_inputs[k], p.clients[k].b, first * p.clients[k].rank, (last - first + 1) * p.clients[k].rank);
    std::vector<double> v(count);
    for (std::uint64_t e = offset; e < offset + count;) {
      const std::uint64_t row = e / width;
      std::uint64_t col = e % width, column_start = 0;
      for (std::size_t k = 0; k < m_inputs.size() && e < offset + count; column_start += p.clients[k].rank, ++k) {
        const std::uint64_t r = p.clients[k].rank;
        if (col >= column_start + r) continue;
        // The same operations, in the same order, as the stacked matrices of compute_svd: (w_k s_k) b, then / s.
        const double c = m_weights[k] * p.clients[k].scale;
        const double* b = rows[k].data() + (row - first) * r;
        for (; col < column_start + r && e < offset + count; ++col, ++e)
          v[e - offset] = c * b[col - column_start] / p.scale;
      }
    }
    store_values(v.data(), count, dtype, dst);
  }

  // Module `m`'s clients' factors, and the stacked factors of the mean update: A (total x in) and
  // B' = [w_k s_k B_k] (out x total).
  void stacks(const ModulePlan& p, std::vector<Mat>& a, std::vector<Mat>& b, Mat& a_stack, Mat& b_stack) {
    const std::size_t n = m_inputs.size();
    a.resize(n);
    b.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      a[k] = read_matrix(*m_inputs[k], p.clients[k].a);
      b[k] = read_matrix(*m_inputs[k], p.clients[k].b);
    }
    Eigen::Index total = 0;
    for (std::size_t k = 0; k < n; ++k) total += a[k].rows();
    a_stack.resize(total, a[0].cols());
    b_stack.resize(b[0].rows(), total);
    for (std::size_t k = 0, at = 0; k < n; at += static_cast<std::size_t>(a[k].rows()), ++k) {
      const auto at_i = static_cast<Eigen::Index>(at);
      a_stack.middleRows(at_i, a[k].rows()) = a[k];
      b_stack.middleCols(at_i, b[k].cols()) = (m_weights[k] * p.clients[k].scale) * b[k];
    }
  }

  // Computes svd's factors of module `m` into m_a and m_b (see the top of this file), keeping the last module's.
  void compute_svd(std::size_t m) {
    if (m_cached == m) return;
    const ModulePlan& p = m_modules[m];
    std::vector<Mat> a, b;
    Mat a_stack, b_stack;
    stacks(p, a, b, a_stack, b_stack);
    // One factorisation of each stack gives both its Q and its R.
    const Eigen::HouseholderQR<Mat> qrb(b_stack), qra(a_stack.transpose());
    const Mat small = thin_r(qrb) * thin_r(qra).transpose();
    const Eigen::JacobiSVD<Mat> svd(small, Eigen::ComputeThinU | Eigen::ComputeThinV);
    const Eigen::VectorXd& s = svd.singularValues();
    const auto k = static_cast<Eigen::Index>(p.rank);
    const Eigen::VectorXd root = (s.head(k) / p.scale).cwiseSqrt();
    const Mat b_out = thin_q(qrb) * svd.matrixU().leftCols(k) * root.asDiagonal();
    const Mat a_out = root.asDiagonal() * (thin_q(qra) * svd.matrixV().leftCols(k)).transpose();
    m_a = a_out;  // evaluated column-major, then copied: the same products for any storage order of m_a
    m_b = b_out;
    m_cached = m;
    if (m_noted.insert(p.name).second) {
      const double all = s.squaredNorm(), kept = s.head(k).squaredNorm();
      const double lost = all > 0 ? (all - kept) / all : 0.0;
      m_notes.push_back(p.name + ": rank " + std::to_string(a_stack.rows()) + " -> " + std::to_string(p.rank) +
                        ", discarded energy " + number(lost) + " of ||dW||^2");
    }
  }

  // factorwise's relative error for module `m`, noted once; it reads the module whole and costs two thin QRs of
  // out x (R + r) and in x (R + r), more than the merge itself, so it runs only when the notes are shown.
  void note_factorwise_error(std::size_t m) {
    const ModulePlan& p = m_modules[m];
    if (m_noted.count(p.name)) return;
    m_noted.insert(p.name);
    std::vector<Mat> a, b;
    Mat a_stack, b_stack;
    stacks(p, a, b, a_stack, b_stack);
    Mat a_out = Mat::Zero(a[0].rows(), a[0].cols()), b_out = Mat::Zero(b[0].rows(), b[0].cols());
    for (std::size_t k = 0; k < m_inputs.size(); ++k) {
      a_out += m_weights[k] * a[k];
      b_out += m_weights[k] * b[k];
    }
    // dW - s B A as one product: [B', -s B] [A_stack; A].
    Mat left(b_stack.rows(), b_stack.cols() + b_out.cols()), right(a_stack.rows() + a_out.rows(), a_stack.cols());
    left << b_stack, -p.scale * b_out;
    right << a_stack, a_out;
    const double whole = product_norm(b_stack, a_stack);
    const double error = product_norm(left, right);
    m_notes.push_back(p.name + ": relative error ||mean(s*B*A) - s*mean(B)*mean(A)|| / ||mean(s*B*A)|| = " +
                      (whole > 0 ? number(error / whole) : std::string("0 (the mean update is zero)")));
  }

  std::vector<Reader*> m_inputs;
  std::vector<double> m_weights;
  LoraMerge m_how;
  std::string m_path;
  std::vector<TensorInfo> m_tensors;
  std::vector<Source> m_sources;
  std::vector<ModulePlan> m_modules;
  LoraAdapter m_out;
  std::size_t m_cached = k_no_tensor;
  RowMat m_a, m_b;
  std::vector<std::string> m_notes;
  std::set<std::string> m_noted;
};

}  // namespace

LoraMerge parse_lora_merge(const std::string& text) {
  if (text == "exact" || text == "stack") return {LoraMethod::exact, 0};
  if (text == "factorwise") return {LoraMethod::factorwise, 0};
  if (text == "frozen-a") return {LoraMethod::frozen_a, 0};
  if (text.starts_with("svd:")) {
    const std::string r = text.substr(4);
    if (!r.empty() && r.size() < 10 && r.find_first_not_of("0123456789") == std::string::npos && std::stoull(r) > 0)
      return {LoraMethod::svd, std::stoull(r)};
  }
  fail_usage("--lora " + text + ": use exact (or stack), svd:RANK, factorwise or frozen-a");
}

std::string lora_merge_name(const LoraMerge& how) {
  switch (how.method) {
    case LoraMethod::exact: return "exact";
    case LoraMethod::svd: return "svd:" + std::to_string(how.rank);
    case LoraMethod::factorwise: return "factorwise";
    case LoraMethod::frozen_a: return "frozen-a";
  }
  return {};
}

bool are_adapters(const std::vector<Reader*>& inputs) {
  const auto adapter = [](const Reader* r) { return r->lora_adapter() != nullptr; };
  const auto n = std::count_if(inputs.begin(), inputs.end(), adapter);
  if (n == 0) return false;
  if (static_cast<std::size_t>(n) != inputs.size()) {
    const Reader* other = *std::find_if_not(inputs.begin(), inputs.end(), adapter);
    fail_usage(other->path() + " is no LoRA adapter, but " +
               (*std::find_if(inputs.begin(), inputs.end(), adapter))->path() +
               " is: adapters merge only with adapters");
  }
  return true;
}

std::unique_ptr<LoraAggregate> aggregate_lora(const std::vector<Reader*>& adapters, std::vector<double> weights,
                                              const LoraMerge& how) {
  return std::make_unique<Aggregate>(adapters, std::move(weights), how);
}

}  // namespace wavg
