// SLERP and model stock: both decide one pair of coefficients per tensor from angles between whole tensors, then
// combine element-wise. One streaming pass collects each tensor's Gram matrix (Backend::update_gram: the inputs
// themselves for SLERP, the task vectors x_k - base for model stock), from which the norms and cosines follow;
// the output is then one weighted sum per element (Backend::weighted_sum), rounded once.
//
//   slerp (mergekit's rule)   cos = <x1, x2> / (|x1| |x2|) (a norm of at most 1e-8 counts as 1); when
//                             |cos| > 0.9995 the inputs are nearly parallel and out = (1 - t) x1 + t x2; otherwise
//                             with theta = acos(cos), out = sin((1 - t) theta) / sin(theta) x1
//                                                           + sin(t theta) / sin(theta) x2.
//   model stock               cos = the mean over pairs j < l of <tau_j, tau_l> / max(|tau_j| |tau_l|, 1e-6)
//                             (mergekit's floor), each clamped to [-1, 1]; t = N cos / (1 + (N - 1) cos);
//                             out = t mean(x_k) + (1 - t) base, computed as (t sum_k x_k + (1 - t) N base) / N.
//                             Near the pole (|1 + (N - 1) cos| < 1e-6) t is meaningless: the tensor keeps the
//                             base, copied. Nearly opposite task vectors give |t| > 2, an extrapolation the
//                             summary counts and -v names, tensor by tensor.

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "wavg/error.hpp"
#include "wavg/task_methods.hpp"
#include "wavg/tensor_values.hpp"

namespace wavg {

namespace {

constexpr double k_eps = 1e-8;
constexpr double k_stock_norm_floor = 1e-6;  // mergekit's clamp on |tau_j| |tau_l|
constexpr double k_stock_pole = 1e-6;        // |1 + (N - 1) cos| below this keeps the base
constexpr double k_stock_far = 2;            // |t| above this is reported
constexpr double k_parallel_dot = 0.9995;

class SlerpStock final : public Method {
 public:
  SlerpStock(Backend& backend, const Plan& plan, const TaskOptions& o) : m_backend(backend), m_plan(plan), m_o(o) {
    m_n = plan.entries.empty() ? 0 : plan.entries.front().source.size();
    m_gram.assign(plan.entries.size() * m_n * m_n, 0.0);
    m_coeffs.resize(plan.entries.size() * (m_n + 1));
    m_keeps_base.assign(plan.entries.size(), 0);
    if (o.values) {  // a recipe's per-tensor t (a layer gradient, filters)
      std::vector<std::string> names;
      for (const PlanEntry& e : plan.entries) names.push_back(e.info.name);
      const std::vector<double> pos = layer_positions(names);
      for (std::size_t e = 0; e < names.size(); ++e)
        m_t.push_back(o.values->get("t", names[e], pos[e]).value_or(o.t.value_or(0.0)));
    }
  }

  std::vector<std::string> decisions() const override { return m_decisions; }
  std::vector<std::string> report() const override {
    std::vector<std::string> lines;
    if (m_kept_base)
      lines.push_back("model stock: " + std::to_string(m_kept_base) +
                      " tensor(s) kept the base (mean cosine at the pole -1/(N-1)); -v names them");
    if (m_far)
      lines.push_back("model stock: " + std::to_string(m_far) +
                      " tensor(s) extrapolate with |t| > 2 (nearly opposite task vectors); -v names them");
    return lines;
  }

  std::string describe() const override {
    if (m_o.method == Aggregator::model_stock) return "model stock";
    char buf[48];
    std::snprintf(buf, sizeof buf, "slerp (t %g)", m_o.t.value_or(0.0));
    return m_t.empty() ? buf : "slerp (per-tensor t from the recipe)";
  }

  // One pass gathers each tensor's Gram matrix (norms and dot products) before anything is combined.
  bool wants_pass(int pass) override { return pass < 1; }
  void observe(int, const PlanEntry& entry, std::uint64_t, const BlockInputs& in) override {
    m_backend.update_gram(in, m_gram.data() + entry_index(entry) * m_n * m_n);
  }

  void end_pass(int) override {
    for (std::size_t e = 0; e < m_plan.entries.size(); ++e) {
      if (m_plan.entries[e].action != Action::average) continue;
      const double* g = m_gram.data() + e * m_n * m_n;
      double* c = m_coeffs.data() + e * (m_n + 1);
      if (m_o.method == Aggregator::slerp) slerp_coeffs(m_t.empty() ? *m_o.t : m_t[e], g, c);
      else stock_coeffs(e, g, c);
    }
  }

  void combine(const PlanEntry& entry, std::uint64_t, const BlockInputs& in, void* out) override {
    const double* c = m_coeffs.data() + entry_index(entry) * (m_n + 1);
    if (m_o.method == Aggregator::slerp) {
      m_backend.weighted_sum(in, std::span<const double>(c, 2), 1.0, entry.out_dtype, out);
      return;
    }
    WAVG_ASSERT(in.base);
    if (m_keeps_base[entry_index(entry)]) {  // the base, copied through one exact weighted sum
      const double one = 1;
      const void* base = in.base;
      BlockInputs only = in;
      only.data = std::span<const void* const>(&base, 1);
      only.base = nullptr;
      m_backend.weighted_sum(only, std::span<const double>(&one, 1), 1.0, entry.out_dtype, out);
      return;
    }
    m_pointers.assign(in.data.begin(), in.data.end());
    m_pointers.push_back(in.base);
    BlockInputs all = in;
    all.data = m_pointers;
    all.base = nullptr;
    m_backend.weighted_sum(all, std::span<const double>(c, m_n + 1), static_cast<double>(m_n), entry.out_dtype,
                           out);
  }

 private:
  std::size_t entry_index(const PlanEntry& entry) const {
    return static_cast<std::size_t>(&entry - m_plan.entries.data());
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

  void stock_coeffs(std::size_t e, const double* g, double* c) {
    const std::string& name = m_plan.entries[e].info.name;
    double sum = 0;
    std::size_t pairs = 0;
    for (std::size_t j = 0; j < m_n; ++j)
      for (std::size_t l = j + 1; l < m_n; ++l, ++pairs) {
        const double norms = std::sqrt(g[j * m_n + j]) * std::sqrt(g[l * m_n + l]);
        sum += std::clamp(g[j * m_n + l] / std::max(norms, k_stock_norm_floor), -1.0, 1.0);
      }
    const double cos = sum / static_cast<double>(pairs), n = static_cast<double>(m_n);
    const double pole = 1 + (n - 1) * cos;
    if (std::fabs(pole) < k_stock_pole) {
      m_keeps_base[e] = 1;
      ++m_kept_base;
      m_decisions.push_back("model stock: " + name + ": mean cosine " + parameter_text(cos) +
                            " is at the pole of t = N cos / (1 + (N - 1) cos); kept the base");
      return;
    }
    const double t = n * cos / pole;
    if (std::fabs(t) > k_stock_far) {
      ++m_far;
      m_decisions.push_back("model stock: " + name + ": mean cosine " + parameter_text(cos) + " gives t = " +
                            parameter_text(t) + " (an extrapolation)");
    }
    for (std::size_t k = 0; k < m_n; ++k) c[k] = t;
    c[m_n] = (1 - t) * n;
  }

  Backend& m_backend;
  const Plan& m_plan;
  TaskOptions m_o;
  std::size_t m_n = 0;
  std::vector<double> m_gram;    // per plan entry, N x N
  std::vector<double> m_coeffs;  // per plan entry, N + 1 (the last: the base's, model stock only)
  std::vector<const void*> m_pointers;
  std::vector<char> m_keeps_base;  // per plan entry: model stock's pole guard copies the base
  std::size_t m_kept_base = 0, m_far = 0;
  std::vector<std::string> m_decisions;
  std::vector<double> m_t;  // per plan entry, from a recipe's values; empty: --t for every tensor
};

}  // namespace

std::unique_ptr<Method> make_slerp_stock(Backend& backend, const Plan& plan, const TaskOptions& options) {
  return std::make_unique<SlerpStock>(backend, plan, options);
}

}  // namespace wavg
