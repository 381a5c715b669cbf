// Arcee Fusion as mergekit 0.1.4's arcee_fusion.py runs it: the other model b's changes to the base a are kept
// where they matter most. Per tensor, with rows along its last dimension (a 1-D tensor is one row):
//
//   importance[i] = |b[i] - a[i]| KL(row of i),  KL = sum_row p log(p / q), p = softmax(b's row) + 1e-8,
//                                                                          q = softmax(a's row) + 1e-8
//   threshold     = median + 1.5 (q3 - q1) of the importances, each quantile the sorted importances' element
//                   floor(q (N - 1))
//   out[i]        = a[i] + (b[i] - a[i]) where importance[i] >= threshold, else a[i].
//
// The quantiles are whole-tensor order statistics: the method asks the engine for each tensor in one block
// (block_unit) and holds its importances in double. Where mergekit differs: above 10^6 entries it takes the
// quantiles of a random sample of 10^6 (torch.randperm, not reproducible), wavg of every entry; and torch sums a
// row's softmax in an order of its own, which moves an importance by rounding and so changes the kept set only
// for an entry within rounding of the threshold.

#include <algorithm>
#include <cmath>
#include <vector>

#include "wavg/dispatch_float.hpp"
#include "wavg/element_math.hpp"
#include "wavg/error.hpp"
#include "wavg/method_spec.hpp"
#include "wavg/task_methods.hpp"

namespace wavg {

namespace {

constexpr double k_softmax_eps = 1e-8;  // added to both softmaxes before the KL divergence

// softmax(x) + eps over one row, as torch computes it: exp(x - max) / sum.
void softmax_eps(const double* x, std::uint64_t len, double* out) {
  const double top = *std::max_element(x, x + len);
  double sum = 0;
  for (std::uint64_t j = 0; j < len; ++j) sum += out[j] = std::exp(x[j] - top);
  for (std::uint64_t j = 0; j < len; ++j) out[j] = out[j] / sum + k_softmax_eps;
}

class ArceeFusion final : public Method {
 public:
  std::string describe() const override { return "arcee fusion"; }

  std::uint64_t block_unit(const PlanEntry& entry) const override { return entry.info.count(); }

  void combine(const PlanEntry& entry, std::uint64_t offset, const BlockInputs& in, void* out) override {
    WAVG_ASSERT(in.base && in.data.size() == 1);
    const std::uint64_t m = in.count;
    if (offset != 0 || m != entry.info.count())
      throw Error(ExitCode::runtime, entry.info.name,
                  "arcee_fusion needs each tensor whole in one block, and an input's storage splits this one; "
                  "convert the inputs to safetensors first");
    if (m == 0) return;
    std::vector<double> a(m), b(m);
    dispatch_float(in.dtype, [&]<DType T>() {
      for (std::uint64_t i = 0; i < m; ++i) a[i] = load<T>(in.base, i), b[i] = load<T>(in.data[0], i);
    });
    const std::uint64_t len = entry.info.shape.empty() ? m : entry.info.shape.back();
    std::vector<double> importance(m), p(len), q(len);
    for (std::uint64_t r = 0; len && r < m / len; ++r) {
      softmax_eps(&b[r * len], len, p.data());
      softmax_eps(&a[r * len], len, q.data());
      double kl = 0;
      for (std::uint64_t j = 0; j < len; ++j) kl += p[j] * std::log(p[j] / q[j]);
      for (std::uint64_t j = 0; j < len; ++j) importance[r * len + j] = std::fabs(b[r * len + j] - a[r * len + j]) * kl;
    }
    std::vector<double> sorted = importance;
    std::sort(sorted.begin(), sorted.end());
    const auto at = [&](double quantile) {
      return sorted[static_cast<std::uint64_t>(quantile * static_cast<double>(m - 1))];
    };
    const double threshold = at(0.5) + 1.5 * (at(0.75) - at(0.25));
    dispatch_float(entry.out_dtype, [&]<DType O>() {
      for (std::uint64_t i = 0; i < m; ++i)
        store<O>(out, i, a[i] + (b[i] - a[i]) * (importance[i] >= threshold ? 1.0 : 0.0));
    });
  }
};

}  // namespace

std::unique_ptr<Method> make_arcee_fusion(const MethodArgs&) { return std::make_unique<ArceeFusion>(); }

}  // namespace wavg
