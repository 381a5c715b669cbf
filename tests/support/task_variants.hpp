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
    TaskCombineParams cut = plain;  // TIES's magnitude cut
    cut.sparsify = Sparsify::magnitude;
    cut.threshold = m_threshold.data();
    cut.tie_last = m_tie_last.data();
    TaskCombineParams band = cut;  // breadcrumbs' second cut too
    band.drop_threshold = m_drop.data();
    band.drop_tie_last = m_drop_last.data();
    TaskCombineParams drop = plain;  // DARE's mask, rescaled by 1 / density
    drop.sparsify = Sparsify::random;
    drop.density = 0.6;
    drop.seed = 0x1234'5678'9abcull;
    drop.stream = 7;
    TaskCombineParams ratio = drop;  // per-input densities, the norm-ratio rescale
    ratio.densities = m_densities.data();
    ratio.scale = m_scale.data();
    return {{"task arithmetic", plain},
            {"task arithmetic, normalized", elected(plain, Consensus::none)},
            {"ties", elected(cut, Consensus::sign)},
            {"breadcrumbs-ties", elected(band, Consensus::sign)},
            {"breadcrumbs", band},
            {"dare-linear, 1/density", drop},
            {"dare-linear, norm ratio", ratio},
            {"dare-ties, norm ratio", elected(ratio, Consensus::sign)}};
  }

 private:
  // `p` normalized, with the sign election `c`.
  static TaskCombineParams elected(TaskCombineParams p, Consensus c) {
    p.consensus = c;
    p.normalize = Normalize::yes;
    return p;
  }

  std::vector<double> m_weights, m_threshold;
  std::vector<std::uint64_t> m_tie_last;
  std::vector<double> m_drop;
  std::vector<std::uint64_t> m_drop_last;
  std::vector<double> m_densities, m_scale;
};

}  // namespace wavg::test
