// The plain and weighted mean. Each output element is sum_k w_k * x_k accumulated in double in input order, then
// divided once by sum_k w_k and rounded once to the tensor's dtype. With unit weights this is exactly sum/N, the
// value numpy computes with np.mean(np.stack(xs).astype(np.float64), axis=0) for any N below numpy's pairwise
// block size, so independent checks can reproduce it bit for bit.

#include <cmath>
#include <cstdio>
#include <string>

#include "wavg/error.hpp"
#include "wavg/method.hpp"
#include "wavg/method_spec.hpp"

namespace wavg {

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

class WeightedMean final : public Method {
 public:
  WeightedMean(Backend& backend, std::vector<double> weights) : m_backend(backend), m_weights(std::move(weights)) {
    for (double w : m_weights) m_sum += w;
  }

  std::string describe() const override {
    if (m_weights.empty()) return "mean";
    std::string s = "weighted mean (weights ";
    for (std::size_t i = 0; i < m_weights.size(); ++i) {
      if (i) s += ",";
      s += number(m_weights[i]);
    }
    return s + ")";
  }

  void combine(const PlanEntry& entry, std::uint64_t, const BlockInputs& in, void* out) override {
    if (m_weights.empty()) {
      m_unit.assign(in.data.size(), 1.0);
      m_backend.weighted_sum(in, m_unit, static_cast<double>(in.data.size()), entry.out_dtype, out);
    } else {
      WAVG_ASSERT(m_weights.size() == in.data.size());
      m_backend.weighted_sum(in, m_weights, m_sum, entry.out_dtype, out);
    }
  }

 private:
  Backend& m_backend;
  std::vector<double> m_weights;
  std::vector<double> m_unit;
  double m_sum = 0;
};

}  // namespace

void validate_weights(const std::vector<double>& weights, std::size_t inputs) {
  if (weights.empty()) return;
  if (weights.size() != inputs)
    fail_usage("--weights has " + std::to_string(weights.size()) + " values for " + std::to_string(inputs) + " inputs");
  if (const std::string p = weights_problem(default_method(), weights, true); !p.empty()) fail_usage("--weights: " + p);
}

std::unique_ptr<Method> make_weighted_mean(Backend& backend, std::vector<double> weights) {
  return std::make_unique<WeightedMean>(backend, std::move(weights));
}

}  // namespace wavg
