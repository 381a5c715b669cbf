#pragma once
// The task-vector parameter sets the backend tests run through every task kernel: one per method's rule (task
// arithmetic, TIES's trim with ties at the cut and sign election, breadcrumbs' second cut, DARE's drop mask with
// the inverse-density and the norm-ratio rescale), for N inputs, so that a CPU/GPU or element/tile difference in
// any branch shows. The arrays live in the object; the TaskCombineParams point into them.

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "wavg/backend.hpp"

namespace wavg::test {

struct TaskVariant {
  std::string name;
  TaskCombineParams params;
};

class TaskVariants {
 public:
  // `cut` is a magnitude that occurs in the inputs' updates (so the tie rule decides), `count` the block's length.
  TaskVariants(std::size_t n, double cut, std::uint64_t count)
      : m_weights(n),
        m_threshold(n, cut),
        m_tie_last(n),
        m_drop(n, 4 * cut),
        m_drop_last(n),
        m_densities(n),
        m_scale(n) {
    for (std::size_t k = 0; k < n; ++k) {
      m_weights[k] = k % 3 == 2 ? -0.5 : 0.25 + 0.5 * static_cast<double>(k);
      m_tie_last[k] = count / (k + 2);
      m_drop_last[k] = count / 3;
      m_densities[k] = 0.3 + 0.1 * static_cast<double>(k % 5);
      m_scale[k] = 1.0 + 0.125 * static_cast<double>(k);
    }
    m_drop[n - 1] = std::numeric_limits<double>::quiet_NaN();  // drops nothing for the last input
  }

  std::vector<TaskVariant> all() const {
    TaskCombineParams plain;
    plain.weights = m_weights.data();
    plain.lambda = 0.75;
    std::vector<TaskVariant> v;
    v.push_back({"task arithmetic", plain});
    TaskCombineParams p = plain;
    p.normalize = Normalize::yes;
    v.push_back({"task arithmetic, normalized", p});
    p = plain;
    p.sparsify = Sparsify::magnitude;
    p.threshold = m_threshold.data();
    p.tie_last = m_tie_last.data();
    p.consensus = Consensus::sign;
    p.normalize = Normalize::yes;
    v.push_back({"ties", p});
    p.drop_threshold = m_drop.data();
    p.drop_tie_last = m_drop_last.data();
    v.push_back({"breadcrumbs-ties", p});
    p.consensus = Consensus::none;
    p.normalize = Normalize::no;
    v.push_back({"breadcrumbs", p});
    p = plain;
    p.sparsify = Sparsify::random;
    p.density = 0.6;
    p.seed = 0x1234'5678'9abcull;
    p.stream = 7;
    v.push_back({"dare-linear, 1/density", p});
    p.densities = m_densities.data();
    p.scale = m_scale.data();
    v.push_back({"dare-linear, norm ratio", p});
    p.consensus = Consensus::sign;
    p.normalize = Normalize::yes;
    v.push_back({"dare-ties, norm ratio", p});
    return v;
  }

 private:
  std::vector<double> m_weights, m_threshold;
  std::vector<std::uint64_t> m_tie_last;
  std::vector<double> m_drop;
  std::vector<std::uint64_t> m_drop_last;
  std::vector<double> m_densities, m_scale;
};

}  // namespace wavg::test
