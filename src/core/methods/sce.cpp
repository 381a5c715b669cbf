// SCE (Wan et al., 2024, "FuseChat: Knowledge Fusion of Chat Models": select, calculate, erase) as mergekit 0.1.4's
// sce.py runs it, on the task vectors tau_k = x_k - base of one tensor:
//
//   select     with select_topk < 1, keep the entries where the task vectors disagree most: the
//              k = floor(select_topk * m) largest population variances var_i = mean_k (tau_k[i] - mean_k tau_k[i])^2,
//              m the number of nonzero variances (none when k is 0); every tau_k is zeroed elsewhere;
//   calculate  one weight per input: w_k = mean_i tau_k[i]^2 over the selected tensor, divided by their sum (1/n each
//              when that sum is below 1e-6);
//   erase      TIES's sign election: tau_k[i] counts where its sign is that of sum_k tau_k[i] (+ for a zero sum);
//   out[i] = base[i] + sum_k w_k e_k[i] tau_k[i] / max(sum_k w_k e_k[i], 1e-6).
//
// The variances and the weights are whole-tensor statistics, so this method asks the engine for each tensor in one
// block (block_unit) and holds it in double; memory is the largest tensor times the inputs, as in mergekit. The
// order of operations is mergekit's; where it sums many terms (the variance, the mean of squares) torch's reduction
// order differs from ours by rounding, which changes the output only where a variance ties with the cut or where a
// rounding of the weights shows in the last bit. Equal variances at the cut are kept by increasing index (torch's
// topk picks among them in an order of its own).

#include <algorithm>
#include <cmath>
#include <numeric>

#include "wavg/dispatch_float.hpp"
#include "wavg/element_math.hpp"
#include "wavg/error.hpp"
#include "wavg/method_spec.hpp"
#include "wavg/task_methods.hpp"
#include "wavg/tensor_values.hpp"

namespace wavg {

namespace {

constexpr double k_weight_floor = 1e-6;   // sce_weight: a smaller sum gives equal weights
constexpr double k_divisor_floor = 1e-6;  // the erased weights' sum is clamped to it

class Sce final : public Method {
 public:
  Sce(const Plan& plan, const TaskOptions& o) : m_plan(plan), m_o(o) {
    m_topk.assign(plan.entries.size(), o.param("select_topk").value_or(1.0));
    if (!o.values) return;
    std::vector<std::string> names;
    for (const PlanEntry& e : plan.entries) names.push_back(e.info.name);
    const std::vector<double> pos = layer_positions(names);
    for (std::size_t e = 0; e < names.size(); ++e)
      m_topk[e] = o.values->get("select_topk", names[e], pos[e]).value_or(m_topk[e]);
  }

  std::string describe() const override {
    const auto topk = m_o.param("select_topk");
    return "sce" + (m_o.values ? std::string(" (select_topk from the recipe)")
                               : topk ? " (select_topk " + parameter_text(*topk) + ")" : std::string());
  }

  std::uint64_t block_unit(const PlanEntry& entry) const override { return entry.info.count(); }

  void combine(const PlanEntry& entry, std::uint64_t offset, const BlockInputs& in, void* out) override {
    WAVG_ASSERT(in.base);
    const std::uint64_t m = in.count;
    if (offset != 0 || m != entry.info.count())
      throw Error(ExitCode::runtime, entry.info.name,
                  "sce needs each tensor whole in one block, and an input's storage splits this one; convert the "
                  "inputs to safetensors first");
    const std::size_t n = in.data.size();
    std::vector<double> tau(n * m);
    dispatch_float(in.dtype, [&]<DType T>() {
      for (std::size_t k = 0; k < n; ++k)
        for (std::uint64_t i = 0; i < m; ++i) tau[k * m + i] = load<T>(in.data[k], i) - load<T>(in.base, i);
    });
    const double topk = m_topk[static_cast<std::size_t>(&entry - m_plan.entries.data())];
    if (topk < 1) select(tau, n, m, topk);
    const std::vector<double> w = weights(tau, n, m);
    dispatch_float(in.dtype, [&]<DType T>() {
      dispatch_float(entry.out_dtype, [&]<DType O>() {
        for (std::uint64_t i = 0; i < m; ++i) {
          double sum = 0;
          for (std::size_t k = 0; k < n; ++k) sum += tau[k * m + i];
          const double majority = sum >= 0 ? 1 : -1;
          double merged = 0, divisor = 0;
          for (std::size_t k = 0; k < n; ++k) {
            const double t = tau[k * m + i];
            const double erased = w[k] * ((t > 0 ? 1 : t < 0 ? -1 : 0) == majority ? 1.0 : 0.0);
            merged += t * erased;
            divisor += erased;
          }
          store<O>(out, i, load<T>(in.base, i) + merged / std::max(divisor, k_divisor_floor));
        }
      });
    });
  }

 private:
  // sce_mask: zeroes every tau_k outside the floor(topk * nonzero) largest variances; all of them at topk <= 0.
  static void select(std::vector<double>& tau, std::size_t n, std::uint64_t m, double topk) {
    std::vector<double> var(m);
    std::uint64_t nonzero = 0;
    for (std::uint64_t i = 0; i < m; ++i) {
      double mean = 0;
      for (std::size_t k = 0; k < n; ++k) mean += tau[k * m + i];
      mean /= static_cast<double>(n);
      double v = 0;
      for (std::size_t k = 0; k < n; ++k) v += (tau[k * m + i] - mean) * (tau[k * m + i] - mean);
      var[i] = v / static_cast<double>(n);
      nonzero += var[i] != 0;
    }
    const auto keep = topk <= 0 ? 0 : static_cast<std::uint64_t>(static_cast<double>(nonzero) * topk);
    std::vector<std::uint64_t> order(m);
    std::iota(order.begin(), order.end(), 0);
    // The `keep` largest variances, equal ones by increasing index.
    std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                     [&](std::uint64_t a, std::uint64_t b) { return var[a] > var[b] || (var[a] == var[b] && a < b); });
    std::vector<char> kept(m, 0);
    for (std::uint64_t j = 0; j < keep; ++j) kept[order[j]] = 1;
    for (std::size_t k = 0; k < n; ++k)
      for (std::uint64_t i = 0; i < m; ++i)
        if (!kept[i]) tau[k * m + i] = 0;
  }

  // sce_weight: each input's mean square, over their sum.
  static std::vector<double> weights(const std::vector<double>& tau, std::size_t n, std::uint64_t m) {
    std::vector<double> w(n, 0.0);
    double sum = 0;
    for (std::size_t k = 0; k < n; ++k) {
      for (std::uint64_t i = 0; i < m; ++i) w[k] += tau[k * m + i] * tau[k * m + i];
      w[k] /= static_cast<double>(m);
      sum += w[k];
    }
    for (double& x : w) x = std::fabs(sum) < k_weight_floor ? 1.0 / static_cast<double>(n) : x / sum;
    return w;
  }

  const Plan& m_plan;
  TaskOptions m_o;
  std::vector<double> m_topk;  // per plan entry
};

}  // namespace

std::unique_ptr<Method> make_sce(const MethodArgs& a) { return std::make_unique<Sce>(a.plan, *a.task); }

}  // namespace wavg
