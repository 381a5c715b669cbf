// SLERP and model stock: both decide one pair of coefficients per tensor from angles between whole tensors, then
// combine element-wise. One streaming pass collects each tensor's Gram matrix (Backend::update_gram: the inputs
// themselves for SLERP, the task vectors x_k - base for model stock), from which the norms and cosines follow;
// the output is then one weighted sum per element (Backend::weighted_sum), rounded once.
//
//   slerp (mergekit's rule)   cos = <x1, x2> / (|x1| |x2|) (a norm of at most 1e-8 counts as 1); when
//                             |cos| > 0.9995 the inputs are nearly parallel and out = (1 - t) x1 + t x2; otherwise
//                             with theta = acos(cos), out = sin((1 - t) theta) / sin(theta) x1
//                                                           + sin(t theta) / sin(theta) x2.
//   nuslerp (mergekit's, with   t = w2 / (w1 + w2) (0.5 when |w1 + w2| < 1e-6); on the task vectors v_k = x_k - base
//   nuslerp_flatten)          with --base, else on the inputs: cos = <v1, v2> / (max(|v1|, 1e-7) max(|v2|, 1e-7))
//                             clamped to [-1, 1]; when 1 - cos^2 <= 1e-16, out = (1 - t) v1 + t v2, otherwise
//                             out = (sin((1 - t) theta) v1 + sin(t theta) v2) / sin(theta); the base is added back.
//   multislerp (mergekit's)   w normalised to sum 1 (unless --no-normalize); on the task vectors with --base, else
//                             the inputs: u_k = v_k / (|v_k| + 1e-8), m = sum_k w_k u_k; out = (sum_k w_k |v_k|)
//                             m / |m|. mergekit also projects onto the tangent space at m / |m| and back, but the
//                             weighted tangent vectors sum to zero (sum_k w_k u_k - |m| m / |m|), so that step
//                             changes the result by rounding only. |m| < 1e-8: two inputs give w_1 v_1 + w_2 v_2,
//                             more are refused (as mergekit). One input is copied.
//   karcher (mergekit's)      the weighted Karcher mean on the unit sphere of the inputs u_k = x_k / |x_k|
//                             (weights 1/N; inputs with |x_k| <= tol left out, the others' weights renormalised),
//                             by at most max_iter Riemannian gradient steps from the normalised mean, stopping when
//                             the tangent's norm is below tol; out = (sum_k |x_k| / N) mean. The mean stays in the
//                             span of the u_k, so it is kept as coefficients over them and every inner product comes
//                             from the Gram matrix.
//   model stock               cos = the mean over pairs j < l of <tau_j, tau_l> / max(|tau_j| |tau_l|, 1e-6)
//                             (mergekit's floor), each clamped to [-1, 1]; t = N cos / (1 + (N - 1) cos);
//                             out = t mean(x_k) + (1 - t) base, computed as (t sum_k x_k + (1 - t) N base) / N.
//                             Near the pole (|1 + (N - 1) cos| < 1e-6) t is meaningless: the tensor keeps the
//                             base, copied. Nearly opposite task vectors give |t| > 2, an extrapolation the
//                             summary counts and -v names, tensor by tensor.
//   model stock, filter_wise  the same per row along the tensor's last dimension (mergekit's dim=-1; a 1-D tensor
//                             is one row): each row's task vectors give their own cosine and t. Blocks hold whole
//                             rows (block_unit), so a row's Gram matrix is complete within its block and only its t
//                             is kept (one double per row); a row an input's storage splits is summed across its
//                             blocks, which the engine visits in order.

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "wavg/error.hpp"
#include "wavg/method_spec.hpp"
#include "wavg/task_methods.hpp"
#include "wavg/tensor_values.hpp"

namespace wavg {

namespace {

constexpr double k_eps = 1e-8;
constexpr double k_stock_norm_floor = 1e-6;  // mergekit's clamp on |tau_j| |tau_l|
constexpr double k_stock_pole = 1e-6;        // |1 + (N - 1) cos| below this keeps the base
constexpr double k_stock_far = 2;            // |t| above this is reported
constexpr double k_parallel_dot = 0.9995;
constexpr double k_nuslerp_norm_floor = 1e-7;  // mergekit's nuslerp clamps each norm
constexpr double k_nuslerp_colinear = 1e-16;   // and takes 1 - cos^2 <= eps^2 (eps 1e-8) as colinear

class SlerpStock final : public Method {
 public:
  SlerpStock(Backend& backend, const Plan& plan, const TaskOptions& o) : m_backend(backend), m_plan(plan), m_o(o) {
    m_n = plan.entries.empty() ? 0 : plan.entries.front().source.size();
    // A recipe's filter_wise is a switch for the whole merge (recipe.cpp refuses filters and gradients on it).
    m_filter_wise = o.method->sphere == Sphere::model_stock && o.values && o.values->get("filter_wise", "", 0).value_or(0);
    if (m_filter_wise) {
      m_row_t.resize(plan.entries.size());
      m_row_gram.resize(m_n * m_n);
      m_rows_kept.assign(plan.entries.size(), 0);
      m_rows_far.assign(plan.entries.size(), 0);
    } else {
      m_gram.assign(plan.entries.size() * m_n * m_n, 0.0);
    }
    m_coeffs.resize(plan.entries.size() * (m_n + 1));
    m_keeps_base.assign(plan.entries.size(), 0);
    m_weights = o.weights.empty() ? std::vector<double>(m_n, 1.0) : o.weights;
    if (o.values) {  // a recipe's per-tensor t (a layer gradient, filters)
      std::vector<std::string> names;
      for (const PlanEntry& e : plan.entries) names.push_back(e.info.name);
      const std::vector<double> pos = layer_positions(names);
      m_pos = pos;
      for (std::size_t e = 0; e < names.size(); ++e) {
        m_t.push_back(o.values->get("t", names[e], pos[e]).value_or(o.param("t").value_or(0.0)));
        if (o.method->sphere != Sphere::nuslerp && o.method->sphere != Sphere::multislerp) continue;
        for (std::size_t k = 0; k < m_n; ++k) {
          const double fallback = k < o.weights.size() ? o.weights[k] : 1;
          m_w.push_back(o.values->get("weight", names[e], pos[e], k).value_or(fallback));
        }
        if (plan.entries[e].action == Action::average)
          check_tensor_weights(*o.method, o.values->source, names[e],
                               std::span<const double>(&m_w[e * m_n], m_n),
                               o.normalize.value_or(o.method->normalize_default));
      }
    }
  }

  std::vector<std::string> decisions() const override { return m_decisions; }
  std::vector<std::string> report() const override {
    std::vector<std::string> lines;
    const std::string what = m_filter_wise ? " row(s)" : " tensor(s)";
    if (m_kept_base)
      lines.push_back("model stock: " + std::to_string(m_kept_base) + what +
                      " kept the base (mean cosine at the pole -1/(N-1)); -v names them");
    if (m_far)
      lines.push_back("model stock: " + std::to_string(m_far) + what +
                      " extrapolate with |t| > 2 (nearly opposite task vectors); -v names them");
    return lines;
  }

  std::string describe() const override {
    if (m_o.method->sphere == Sphere::model_stock) return m_filter_wise ? "model stock (filter-wise: a t per row)" : "model stock";
    if (m_o.method->sphere == Sphere::karcher)
      return "karcher mean" + std::string(m_o.values ? " (from the recipe)" : "") +
             (m_o.param("max_iter") ? ", max_iter " + std::to_string(static_cast<long>(*m_o.param("max_iter"))) : "") +
             (m_o.param("tol") ? ", tol " + parameter_text(*m_o.param("tol")) : "");
    if (m_o.method->sphere == Sphere::multislerp)
      return std::string("multislerp") + (m_w.empty() ? "" : " (per-tensor weights from the recipe)") +
             (m_o.has_base ? " on task vectors" : "");
    if (m_o.method->sphere == Sphere::nuslerp)
      return m_w.empty() ? "nuslerp (weights " + parameter_text(m_o.weights[0]) + ", " +
                               parameter_text(m_o.weights[1]) + (m_o.has_base ? ", on task vectors)" : ")")
                         : std::string("nuslerp (per-tensor weights from the recipe)");
    char buf[48];
    std::snprintf(buf, sizeof buf, "slerp (t %g)", m_o.param("t").value_or(0.0));
    return m_t.empty() ? buf : "slerp (per-tensor t from the recipe)";
  }

  // One pass gathers each tensor's Gram matrix (norms and dot products) before anything is combined.
  bool wants_pass(int pass) override { return pass < 1; }
  std::uint64_t block_unit(const PlanEntry& entry) const override { return m_filter_wise ? row_length(entry) : 1; }

  void observe(int, const PlanEntry& entry, std::uint64_t offset, const BlockInputs& in) override {
    const std::size_t e = entry_index(entry);
    if (!m_filter_wise) {
      m_backend.update_gram(in, m_gram.data() + e * m_n * m_n);
      return;
    }
    const std::uint64_t len = row_length(entry);
    std::vector<double>& t = m_row_t[e];
    t.resize(entry.info.count() / len);
    for_rows(offset, in.count, len, [&](std::uint64_t row, std::uint64_t at, std::uint64_t piece, bool row_starts) {
      if (row_starts) std::fill(m_row_gram.begin(), m_row_gram.end(), 0.0);
      m_backend.update_gram(slice(in, at, piece), m_row_gram.data());
      if ((offset + at + piece) % len != 0) return;  // the row goes on in the next block
      double cos = 0;
      t[row] = stock_t(m_row_gram.data(), cos);
      if (std::isnan(t[row]))
        ++m_rows_kept[e];
      else if (std::fabs(t[row]) > k_stock_far)
        ++m_rows_far[e];
    });
  }

  void end_pass(int) override {
    for (std::size_t e = 0; e < m_plan.entries.size(); ++e) {
      if (m_plan.entries[e].action != Action::average) continue;
      if (m_filter_wise) {
        filter_wise_decisions(e);
        continue;
      }
      const double* g = m_gram.data() + e * m_n * m_n;
      double* c = m_coeffs.data() + e * (m_n + 1);
      if (m_o.method->sphere == Sphere::slerp)
        slerp_coeffs(m_t.empty() ? *m_o.param("t") : m_t[e], g, c);
      else if (m_o.method->sphere == Sphere::nuslerp)
        nuslerp_coeffs(m_w.empty() ? m_o.weights.data() : &m_w[e * m_n], g, c);
      else if (m_o.method->sphere == Sphere::karcher)
        karcher_coeffs(e, g, c);
      else if (m_o.method->sphere == Sphere::multislerp)
        multislerp_coeffs(e, m_w.empty() ? m_weights.data() : &m_w[e * m_n], g, c);
      else
        stock_coeffs(e, g, c);
    }
  }

  void combine(const PlanEntry& entry, std::uint64_t offset, const BlockInputs& in, void* out) override {
    const std::size_t e = entry_index(entry);
    const double* c = m_coeffs.data() + e * (m_n + 1);
    if (!in.base) {  // slerp, and nuslerp and multislerp without a base: a weighted sum of the inputs
      m_backend.weighted_sum(in, std::span<const double>(c, m_n), 1.0, entry.out_dtype, out);
      return;
    }
    if (!m_filter_wise) {
      with_base(in, m_keeps_base[e] ? nullptr : c, entry.out_dtype, out);
      return;
    }
    const std::uint64_t len = row_length(entry);
    const std::size_t out_size = dtype_size(entry.out_dtype);
    std::vector<double> row_c(m_n + 1);
    for_rows(offset, in.count, len, [&](std::uint64_t row, std::uint64_t at, std::uint64_t piece, bool) {
      const double t = m_row_t[e][row];
      stock_coeffs_of(t, row_c.data());
      with_base(slice(in, at, piece), std::isnan(t) ? nullptr : row_c.data(), entry.out_dtype,
                static_cast<char*>(out) + at * out_size);
    });
  }

 private:
  std::size_t entry_index(const PlanEntry& entry) const {
    return static_cast<std::size_t>(&entry - m_plan.entries.data());
  }

  // A row of filter_wise model stock: the tensor's last dimension (a scalar is a row of one).
  static std::uint64_t row_length(const PlanEntry& entry) {
    return entry.info.shape.empty() || entry.info.shape.back() == 0 ? 1 : entry.info.shape.back();
  }

  // Calls f(row, at, piece, row_starts) for each row's part in elements [offset, offset + count) of a tensor of
  // rows of `len`; `at` counts from the block's start.
  template <class F>
  static void for_rows(std::uint64_t offset, std::uint64_t count, std::uint64_t len, F f) {
    for (std::uint64_t at = 0; at < count;) {
      const std::uint64_t pos = offset + at, row = pos / len;
      const std::uint64_t piece = std::min(count - at, (row + 1) * len - pos);
      f(row, at, piece, pos % len == 0);
      at += piece;
    }
  }

  // Returns elements [at, at + count) of a block (the pointers live in m_slice until the next call).
  BlockInputs slice(const BlockInputs& in, std::uint64_t at, std::uint64_t count) {
    const std::size_t size = dtype_size(in.dtype);
    m_slice.clear();
    for (const void* p : in.data) m_slice.push_back(static_cast<const char*>(p) + at * size);
    BlockInputs s = in;
    s.data = m_slice;
    s.count = count;
    if (in.base) s.base = static_cast<const char*>(in.base) + at * size;
    return s;
  }

  // Writes sum_k c[k] x_k + c[N] base (divided by N for model stock), or the base itself when c is null, both
  // through one exact weighted sum.
  void with_base(const BlockInputs& in, const double* c, DType out_dtype, void* out) {
    WAVG_ASSERT(in.base);
    if (!c) {
      const double one = 1;
      const void* base = in.base;
      BlockInputs only = in;
      only.data = std::span<const void* const>(&base, 1);
      only.base = nullptr;
      m_backend.weighted_sum(only, std::span<const double>(&one, 1), 1.0, out_dtype, out);
      return;
    }
    m_pointers.assign(in.data.begin(), in.data.end());
    m_pointers.push_back(in.base);
    BlockInputs all = in;
    all.data = m_pointers;
    all.base = nullptr;
    const double divisor = m_o.method->sphere == Sphere::model_stock ? static_cast<double>(m_n) : 1.0;
    m_backend.weighted_sum(all, std::span<const double>(c, m_n + 1), divisor, out_dtype, out);
  }

  void slerp_coeffs(double t, const double* g, double* c) const {
    const double n0 = std::sqrt(g[0]), n1 = std::sqrt(g[3]);
    const double dot = g[1] / ((n0 > k_eps ? n0 : 1) * (n1 > k_eps ? n1 : 1));
    if (std::fabs(dot) > k_parallel_dot) {
      c[0] = 1 - t;
      c[1] = t;
      return;
    }
    const double theta = std::acos(dot), sin_theta = std::sin(theta);
    c[0] = std::sin(theta - theta * t) / sin_theta;
    c[1] = std::sin(theta * t) / sin_theta;
  }

  // c[2], the base's coefficient, is read only when there is a base: base + c0 v1 + c1 v2.
  void nuslerp_coeffs(const double* w, const double* g, double* c) const {
    const double total = w[0] + w[1];
    const double t = std::fabs(total) < 1e-6 ? 0.5 : w[1] / total;
    const double n0 = std::max(std::sqrt(g[0]), k_nuslerp_norm_floor);
    const double n1 = std::max(std::sqrt(g[3]), k_nuslerp_norm_floor);
    const double cos = std::clamp(g[1] / (n0 * n1), -1.0, 1.0);
    if (1 - cos * cos <= k_nuslerp_colinear) {
      c[0] = 1 - t;
      c[1] = t;
    } else {
      const double theta = std::acos(cos), sin_theta = std::sin(theta);
      c[0] = std::sin((1 - t) * theta) / sin_theta;
      c[1] = std::sin(t * theta) / sin_theta;
    }
    c[2] = 1 - c[0] - c[1];
  }

  void multislerp_coeffs(std::size_t e, const double* weights, const double* g, double* c) const {
    std::vector<double> w(weights, weights + m_n), d(m_n);
    double sum = 0, scale = 0, mm = 0;
    for (double x : w) sum += x;
    if (m_o.normalize.value_or(true))
      for (double& x : w) x /= sum;
    for (std::size_t k = 0; k < m_n; ++k) {
      d[k] = std::sqrt(g[k * m_n + k]) + k_eps;
      scale += w[k] * std::sqrt(g[k * m_n + k]);
    }
    for (std::size_t j = 0; j < m_n; ++j)
      for (std::size_t l = 0; l < m_n; ++l) mm += w[j] * w[l] * g[j * m_n + l] / (d[j] * d[l]);
    const double norm = std::sqrt(std::max(mm, 0.0));
    double total = 0;
    for (std::size_t k = 0; k < m_n; ++k) {
      if (m_n == 1)
        c[k] = 1;  // mergekit returns the one input itself, base or not
      else if (norm >= k_eps)
        c[k] = scale * w[k] / (d[k] * norm);
      else if (m_n == 2)
        c[k] = w[k];
      else
        throw Error(ExitCode::runtime, m_plan.entries[e].info.name,
                    "multislerp: the weighted mean of the unit task vectors is zero (antipodal inputs whose "
                    "weights cancel); give other weights");
      total += c[k];
    }
    c[m_n] = m_n == 1 ? 0 : 1 - total;  // the base's coefficient, read only with a base
  }

  void karcher_coeffs(std::size_t e, const double* g, double* c) const {
    const std::string& name = m_plan.entries[e].info.name;
    const double pos = m_pos.empty() ? 0 : m_pos[e];
    const auto param = [&](const char* key, double fallback) {
      return m_o.values ? m_o.values->get(key, name, pos).value_or(fallback) : fallback;
    };
    const double tol = param("tol", m_o.param("tol").value_or(1e-5));
    const auto max_iter = static_cast<long>(param("max_iter", m_o.param("max_iter").value_or(10)));
    std::vector<std::size_t> valid;
    double scale = 0;
    for (std::size_t k = 0; k < m_n; ++k) {
      c[k] = 0;
      const double norm = std::sqrt(g[k * m_n + k]);
      scale += norm / static_cast<double>(m_n);
      if (norm > tol) valid.push_back(k);
    }
    if (m_n == 1) c[0] = 1;  // mergekit returns the one input itself
    if (m_n == 1 || valid.empty()) return;
    const std::size_t v = valid.size();
    std::vector<double> u(v * v), a(v, 1.0 / static_cast<double>(v)), b(v), n(v);  // u: the units' Gram matrix
    for (std::size_t k = 0; k < v; ++k) n[k] = std::sqrt(g[valid[k] * m_n + valid[k]]);
    for (std::size_t j = 0; j < v; ++j)
      for (std::size_t l = 0; l < v; ++l) u[j * v + l] = g[valid[j] * m_n + valid[l]] / (n[j] * n[l]);
    const auto dot = [&](const std::vector<double>& x, std::size_t k) {  // <x, u_k>
      double s = 0;
      for (std::size_t l = 0; l < v; ++l) s += x[l] * u[l * v + k];
      return s;
    };
    const auto norm = [&](const std::vector<double>& x) {
      double s = 0;
      for (std::size_t k = 0; k < v; ++k) s += x[k] * dot(x, k);
      return std::sqrt(std::max(s, 0.0));
    };
    const double mean_norm = norm(a);
    for (std::size_t k = 0; k < v; ++k) a[k] = mean_norm < tol ? (k == 0 ? 1.0 : 0.0) : a[k] / mean_norm;
    for (long it = 0; it < max_iter; ++it) {
      std::fill(b.begin(), b.end(), 0.0);
      for (std::size_t k = 0; k < v; ++k) {
        const double d = std::clamp(dot(a, k), -1.0, 1.0), theta = std::acos(d);
        if (theta < tol) continue;
        const double f = theta / std::sin(theta) / static_cast<double>(v);
        b[k] += f;
        for (std::size_t l = 0; l < v; ++l) b[l] -= f * d * a[l];
      }
      const double tn = norm(b);
      if (tn < tol) break;
      for (std::size_t k = 0; k < v; ++k) a[k] = std::cos(tn) * a[k] + std::sin(tn) * (b[k] / tn);
      const double un = norm(a);
      if (un > tol)
        for (double& x : a) x /= un;
    }
    for (std::size_t k = 0; k < v; ++k) c[valid[k]] = scale * a[k] / n[k];
  }

  // Returns model stock's t from the task vectors' Gram matrix g (N x N), or NaN at the pole; the mean cosine
  // goes to `cos`.
  double stock_t(const double* g, double& cos) const {
    double sum = 0;
    std::size_t pairs = 0;
    for (std::size_t j = 0; j < m_n; ++j)
      for (std::size_t l = j + 1; l < m_n; ++l, ++pairs) {
        const double norms = std::sqrt(g[j * m_n + j]) * std::sqrt(g[l * m_n + l]);
        sum += std::clamp(g[j * m_n + l] / std::max(norms, k_stock_norm_floor), -1.0, 1.0);
      }
    const double n = static_cast<double>(m_n);
    cos = sum / static_cast<double>(pairs);
    const double pole = 1 + (n - 1) * cos;
    return std::fabs(pole) < k_stock_pole ? std::nan("") : n * cos / pole;
  }

  // Fills the N + 1 coefficients of t mean(x_k) + (1 - t) base, times N (with_base divides by N).
  void stock_coeffs_of(double t, double* c) const {
    const double n = static_cast<double>(m_n);
    for (std::size_t k = 0; k < m_n; ++k) c[k] = t;
    c[m_n] = (1 - t) * n;
  }

  void stock_coeffs(std::size_t e, const double* g, double* c) {
    const std::string& name = m_plan.entries[e].info.name;
    double cos = 0;
    const double t = stock_t(g, cos);
    if (std::isnan(t)) {
      m_keeps_base[e] = 1;
      ++m_kept_base;
      m_decisions.push_back("model stock: " + name + ": mean cosine " + parameter_text(cos) +
                            " is at the pole of t = N cos / (1 + (N - 1) cos); kept the base");
      return;
    }
    if (std::fabs(t) > k_stock_far) {
      ++m_far;
      m_decisions.push_back("model stock: " + name + ": mean cosine " + parameter_text(cos) +
                            " gives t = " + parameter_text(t) + " (an extrapolation)");
    }
    stock_coeffs_of(t, c);
  }

  void filter_wise_decisions(std::size_t e) {
    const std::string& name = m_plan.entries[e].info.name;
    const std::string rows = " of " + std::to_string(m_row_t[e].size()) + " rows";
    m_kept_base += m_rows_kept[e];
    m_far += m_rows_far[e];
    if (m_rows_kept[e])
      m_decisions.push_back("model stock: " + name + ": " + std::to_string(m_rows_kept[e]) + rows +
                            " at the pole of t = N cos / (1 + (N - 1) cos) kept the base");
    if (m_rows_far[e])
      m_decisions.push_back("model stock: " + name + ": " + std::to_string(m_rows_far[e]) + rows +
                            " extrapolate with |t| > 2");
  }

  Backend& m_backend;
  const Plan& m_plan;
  TaskOptions m_o;
  std::size_t m_n = 0;
  std::vector<double> m_gram;    // per plan entry, N x N
  std::vector<double> m_coeffs;  // per plan entry, N + 1 (the last: the base's, model stock only)
  std::vector<const void*> m_pointers;
  std::vector<char> m_keeps_base;  // per plan entry: model stock's pole guard copies the base
  std::size_t m_kept_base = 0, m_far = 0;  // tensors, or rows with filter_wise
  bool m_filter_wise = false;
  std::vector<std::vector<double>> m_row_t;  // filter_wise: per plan entry, each row's t (NaN: keeps the base)
  std::vector<double> m_row_gram;            // filter_wise: the row being summed, N x N
  std::vector<std::size_t> m_rows_kept, m_rows_far;  // filter_wise: per plan entry
  std::vector<const void*> m_slice;
  std::vector<std::string> m_decisions;
  std::vector<double> m_pos;      // per plan entry, the layer position of a recipe's values
  std::vector<double> m_weights;  // --weights, 1 each when none were given
  std::vector<double> m_w;  // nuslerp, multislerp: per plan entry, N weights from a recipe's values; empty: --weights
  std::vector<double> m_t;  // per plan entry, from a recipe's values; empty: --t for every tensor
};

}  // namespace

std::unique_ptr<Method> make_slerp_stock(const MethodArgs& a) {
  return std::make_unique<SlerpStock>(a.backend, a.plan, *a.task);
}

}  // namespace wavg
