// NearSwap (alchemonaut, QuartetAnemoi-70B) as mergekit 0.1.4 runs it: each entry of the base a moves to the other
// model's b by a weight that grows as they get close,
//
//   w = clamp(t / max(|a - b|, 1e-6), 0, 1)        out = w b + (1 - w) a
//
// so entries that differ by at most t take b's value and the others keep most of a's. Element-wise, in double, in
// mergekit's order of operations (the same bits where mergekit computes in float64): mergekit's t / tensor is
// torch's Tensor.__rtruediv__, which computes reciprocal() * t (torch/_tensor.py), so wavg divides 1 by the
// distance and multiplies by t too (t / d can differ from it by one unit in the last place); t may vary per tensor
// (a recipe's gradient or filters). One pass, no statistics: each block is combined as it comes, on the host.

#include <algorithm>
#include <cmath>

#include "wavg/dispatch_float.hpp"
#include "wavg/element_math.hpp"
#include "wavg/method_spec.hpp"
#include "wavg/task_methods.hpp"
#include "wavg/tensor_values.hpp"

namespace wavg {

namespace {

constexpr double k_min_distance = 1e-6;  // mergekit's clamp on |a - b|

class NearSwap final : public Method {
 public:
  NearSwap(const Plan& plan, const TaskOptions& o) : m_plan(plan), m_o(o) {
    if (!o.values) return;
    std::vector<std::string> names;
    for (const PlanEntry& e : plan.entries) names.push_back(e.info.name);
    const std::vector<double> pos = layer_positions(names);
    for (std::size_t e = 0; e < names.size(); ++e)
      m_t.push_back(o.values->get("t", names[e], pos[e]).value_or(o.param("t").value_or(0.0)));
  }

  std::string describe() const override {
    return m_t.empty() ? "nearswap (t " + parameter_text(*m_o.param("t")) + ")"
                       : "nearswap (per-tensor t from the recipe)";
  }

  void combine(const PlanEntry& entry, std::uint64_t, const BlockInputs& in, void* out) override {
    WAVG_ASSERT(in.base && in.data.size() == 1);
    const auto index = static_cast<std::size_t>(&entry - m_plan.entries.data());
    const double t = m_t.empty() ? *m_o.param("t") : m_t[index];
    const auto count = static_cast<std::int64_t>(in.count);
    dispatch_float(in.dtype, [&]<DType T>() {
      dispatch_float(entry.out_dtype, [&]<DType O>() {
#pragma omp parallel for schedule(static) if (count >= (1 << 16))
        for (std::int64_t i = 0; i < count; ++i) {
          const auto k = static_cast<std::uint64_t>(i);
          const double a = load<T>(in.base, k), b = load<T>(in.data[0], k);
          const double w = std::clamp(1 / std::max(std::fabs(a - b), k_min_distance) * t, 0.0, 1.0);
          store<O>(out, k, w * b + (1 - w) * a);
        }
      });
    });
  }

 private:
  const Plan& m_plan;
  TaskOptions m_o;
  std::vector<double> m_t;  // per plan entry, from a recipe's values; empty: --t for every tensor
};

}  // namespace

std::unique_ptr<Method> make_nearswap(const MethodArgs& a) { return std::make_unique<NearSwap>(a.plan, *a.task); }

}  // namespace wavg
