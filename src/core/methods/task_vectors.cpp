// Task arithmetic, TIES, breadcrumbs and DARE on the task vectors tau_k = x_k - base, as mergekit's generalized task
// arithmetic defines them (sparsify each tau_k, optionally elect a sign per element, combine, scale by lambda, add
// to the base). Everything is element-wise except the magnitude trimming: TIES keeps the k = floor(D * n) largest
// |tau_k| of each tensor; breadcrumbs drops the largest floor(gamma * n) (fewer when D + gamma > 1) and keeps the
// next floor(D * n). Each cut is a whole-tensor order statistic (TIES has one, breadcrumbs two), found exactly in
// at most two streaming passes without holding any tensor in memory:
//
//   pass 0   a histogram of the nonzero |tau_k| over 2^15 buckets (the top 16 bits of the double, which order as
//            the values do) for each input; at the end of each tensor, the bucket in which the k-th largest falls
//            and how many values must still be taken from it;
//   pass 1   the values of that bucket only, with their element indices; the k-th largest of them (ties to the
//            lower index) is the threshold, and its index says which equal values are kept.
//
// Ties: mergekit ranks with torch's unstable sort (of |tau| rounded to float32 on the CPU), so which of equal
// magnitudes straddling a cut it keeps is its sort's accident; wavg ranks equal magnitudes by index. Where no two
// magnitudes tie at a cut (in float32), the kept sets are the same.
//
// A bucket spans 1/16 of a binary order of magnitude, so pass 1 holds a small fraction of a tensor. Zeros are
// never counted: a zero entry contributes nothing whether kept or not, and never agrees with an elected sign.
// Pass 1 is skipped where it has nothing to find: a tensor that fits in one engine block gets its candidates in
// pass 0 from the block still at hand, and when the whole bucket is kept its lower edge is the threshold (the
// same mask as its smallest value would give). Only tensors larger than a block are read a second time. A tensor of
// one block skips the passes altogether (settles_in_combine): combine() takes its histogram, candidates and cuts
// from the block it is given, so it is read once. DARE's L1 rescale does the same, and there the drop mask drawn for
// the norms is kept (a bit per element and input, 1/32 of a float32 block) and used again for the combination, so
// it is drawn once; a tensor larger than a block has its norms taken in pass 0 and its mask drawn twice.
// The per-element combination is Backend::task_combine; DARE's drop mask comes from Philox keyed by (seed, tensor,
// input, element), so it is the same for any block size and thread count.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "wavg/error.hpp"
#include "wavg/method_spec.hpp"
#include "wavg/task_methods.hpp"
#include "wavg/tensor_values.hpp"

namespace wavg {

namespace {

constexpr std::size_t k_none = std::numeric_limits<std::size_t>::max();
constexpr double k_l1_eps = 1e-7;

// One cut of one input's tensor: the values ranked at or above it (a NaN threshold: none).
struct Cut {
  double threshold = 0;
  std::uint64_t tie_last = std::numeric_limits<std::uint64_t>::max();
  std::size_t bucket = k_none;  // between the passes: where the threshold lies, and how many to take there
  std::uint64_t need = 0;
};

class TaskVectors final : public Method {
 public:
  TaskVectors(Backend& backend, const Plan& plan, const TaskOptions& o) : m_backend(backend), m_plan(plan), m_o(o) {
    m_n = plan.entries.empty() ? 0 : plan.entries.front().source.size();
    m_weights = o.weights.empty() ? std::vector<double>(m_n, 1.0) : o.weights;
    // The family's switches are the method's row (registry.cpp): how it sparsifies, its sign consensus, whether
    // it normalises by default; breadcrumbs is the magnitude trim with a second cut (gamma) above the first.
    const MethodSpec& row = task_row(o);
    const bool dare = row.sparsify == Sparsify::random;
    const ParamSpec* gamma = find_param(row, "gamma");
    m_crumbs = gamma != nullptr;
    m_params.weights = m_weights.data();
    m_params.lambda = o.param("lambda").value_or(1.0);
    m_params.sparsify = row.sparsify;
    m_params.density = o.param("density").value_or(1.0);
    m_gamma = o.param("gamma").value_or(gamma ? gamma->fallback : 0);
    m_params.seed = dare ? (o.seed ? *o.seed : random_seed()) : 0;
    m_params.consensus = row.consensus;
    m_params.normalize = o.normalize.value_or(row.normalize_default) ? Normalize::yes : Normalize::no;
    m_per = m_crumbs ? 2 : 1;
    if (m_params.sparsify == Sparsify::magnitude) m_cuts.resize(plan.entries.size() * m_n * m_per);
    m_rescale = dare ? o.rescale.value_or(DareRescale::l1) : DareRescale::inverse_density;
    if (m_rescale == DareRescale::l1) m_l1.assign(plan.entries.size() * m_n * 2, 0.0);
    m_settled.assign(plan.entries.size(), false);
    if (o.values) per_tensor(*o.values);
  }

  std::string describe() const override {
    std::string s = m_o.linear ? "linear" : std::string(m_o.method->name);
    if (const auto d = m_o.param("density")) s += ", density " + parameter_text(*d);
    if (m_crumbs) s += ", gamma " + parameter_text(m_gamma);
    if (m_params.sparsify == Sparsify::random)
      s += ", seed " + std::to_string(m_params.seed) + ", rescale " +
           std::string(name_of(k_dare_rescale_names, m_rescale));
    return s + describe_common(m_o);
  }

  std::vector<std::string> decisions() const override {
    // Tensors of one block are decided in combine(), after the passes decided the larger ones: tensor order.
    auto sorted = m_decisions;
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> lines;
    for (auto& [index, line] : sorted) lines.push_back(std::move(line));
    return lines;
  }
  std::vector<std::string> report() const override {
    if (m_decisions.empty()) return {};
    if (m_crumbs)
      return {"breadcrumbs: " + std::to_string(m_decisions.size()) +
              " tensor(s) too small for the density kept no entry of some task vector (as mergekit); -v names them"};
    return {"ties: " + std::to_string(m_decisions.size()) +
            " tensor(s) too small for the density kept one entry per task vector; -v names them"};
  }

  bool wants_pass(int pass) override {
    if (m_params.sparsify == Sparsify::random) return pass == 0 && m_rescale == DareRescale::l1;
    if (m_params.sparsify != Sparsify::magnitude) return false;
    return pass == 0 || (pass == 1 && std::any_of(m_cuts.begin(), m_cuts.end(), pending));
  }

  bool settles_in_combine(const PlanEntry&) const override { return needs_passes(); }

  bool observes(int pass, const PlanEntry& entry) override {
    if (pass == 0) return true;
    const auto first = m_cuts.begin() + static_cast<std::ptrdiff_t>(entry_index(entry) * m_n * m_per);
    return std::any_of(first, first + static_cast<std::ptrdiff_t>(m_n * m_per), pending);
  }

  void observe(int pass, const PlanEntry& entry, std::uint64_t offset, const BlockInputs& in) override {
    const std::size_t index = entry_index(entry);
    m_settled[index] = true;
    if (m_params.sparsify == Sparsify::random) {  // DARE's L1 rescale: |tau|_1 and |masked tau|_1 per input
      TaskCombineParams p = m_params;
      p.stream = index;
      p.densities = densities_of(index);
      m_backend.random_mask_l1(in, p, offset, m_l1.data() + index * m_n * 2);
      return;
    }
    if (index != m_current) {
      finish_entry(pass);
      m_current = index;
      if (pass == 0) m_hist.assign(m_n * k_magnitude_buckets, 0);
      m_candidates.assign(m_n * m_per, {});
    }
    if (pass == 0)
      for (std::size_t k = 0; k < m_n; ++k)
        m_backend.magnitude_histogram(in, k, m_hist.data() + k * k_magnitude_buckets);
    else
      take_candidates(index, offset, in);
    if (pass == 0 && offset == 0 && in.count == entry.info.count()) {
      // The block is the whole tensor and still at hand: its candidates are taken now, and pass 1 skips it.
      finish_entry(0);
      take_candidates(index, offset, in);
      finish_entry(1);
      m_current = k_none;
    }
  }

  void end_pass(int pass) override {
    if (m_params.sparsify == Sparsify::random) return;
    finish_entry(pass);
    m_current = k_none;
    m_hist = {};
    m_candidates = {};
  }

  void combine(const PlanEntry& entry, std::uint64_t offset, const BlockInputs& in, void* out) override {
    WAVG_ASSERT((in.base || !m_o.has_base) && in.data.size() == m_n);
    const std::size_t index = entry_index(entry);
    TaskCombineParams p = m_params;
    p.densities = densities_of(index);
    p.stream = index;
    if (needs_passes() && !m_settled[index]) settle(entry, in, p);
    if (!m_entry_w.empty()) {
      p.weights = m_entry_w.data() + index * m_n;
      p.lambda = m_entry_lambda[index];
    }
    if (p.sparsify == Sparsify::magnitude) {
      m_threshold.resize(m_n * m_per);
      m_tie_last.resize(m_n * m_per);
      for (std::size_t j = 0; j < m_per; ++j)  // the keep cuts of every input, then (breadcrumbs) the drop cuts
        for (std::size_t k = 0; k < m_n; ++k) {
          const Cut& c = m_cuts[(index * m_n + k) * m_per + j];
          m_threshold[j * m_n + k] = c.threshold;
          m_tie_last[j * m_n + k] = c.tie_last;
        }
      p.threshold = m_threshold.data();
      p.tie_last = m_tie_last.data();
      if (m_crumbs) {
        p.drop_threshold = m_threshold.data() + m_n;
        p.drop_tie_last = m_tie_last.data() + m_n;
      }
    } else if (p.sparsify == Sparsify::random && m_rescale != DareRescale::inverse_density) {
      m_scale.assign(m_n, 1.0);
      if (m_rescale == DareRescale::l1)
        for (std::size_t k = 0; k < m_n; ++k) {
          // mergekit's rescaled_masked_tensor: no rescale when either norm is below 1e-7.
          const double before = m_l1[(index * m_n + k) * 2], after = m_l1[(index * m_n + k) * 2 + 1];
          if (!(before < k_l1_eps || after < k_l1_eps)) m_scale[k] = before / after;
        }
      p.scale = m_scale.data();
    }
    m_backend.task_combine(in, p, offset, entry.out_dtype, out);
  }

 private:
  // Whether the method looks at whole tensors before combining them: TIES's cuts, DARE's L1 norms.
  bool needs_passes() const {
    return m_params.sparsify == Sparsify::magnitude ||
           (m_params.sparsify == Sparsify::random && m_rescale == DareRescale::l1);
  }

  // Takes what the passes would have seen of a tensor the engine left out of them, from its one block (the whole
  // tensor): TIES's cuts as observe() takes them from such a block, or DARE's L1 norms, keeping the mask in `p`.
  void settle(const PlanEntry& entry, const BlockInputs& in, TaskCombineParams& p) {
    const std::size_t index = entry_index(entry);
    WAVG_ASSERT(in.count == entry.info.count());
    m_settled[index] = true;
    if (m_params.sparsify == Sparsify::random) {
      m_kept.resize(m_n * ((in.count + 63) / 64));
      p.kept = m_kept.data();
      m_backend.random_mask_l1(in, p, 0, m_l1.data() + index * m_n * 2);
      return;
    }
    m_current = index;
    m_hist.assign(m_n * k_magnitude_buckets, 0);
    m_candidates.assign(m_n * m_per, {});
    for (std::size_t k = 0; k < m_n; ++k) m_backend.magnitude_histogram(in, k, m_hist.data() + k * k_magnitude_buckets);
    finish_entry(0);
    take_candidates(index, 0, in);
    finish_entry(1);
    m_current = k_none;
  }

  // Fills the per-tensor weights, densities and lambda from a recipe's settings; what a setting does not give keeps
  // the method's value.
  void per_tensor(const TensorValues& v) {
    std::vector<std::string> names;
    for (const PlanEntry& e : m_plan.entries) names.push_back(e.info.name);
    const std::vector<double> t = layer_positions(names);
    m_entry_w.resize(names.size() * m_n);
    m_entry_d.resize(names.size() * m_n);
    if (m_crumbs) m_entry_g.resize(names.size() * m_n);
    m_entry_lambda.resize(names.size());
    for (std::size_t e = 0; e < names.size(); ++e) {
      m_entry_lambda[e] = v.get("lambda", names[e], t[e]).value_or(m_params.lambda);
      for (std::size_t k = 0; k < m_n; ++k) {
        m_entry_w[e * m_n + k] = v.get("weight", names[e], t[e], k).value_or(m_weights[k]);
        m_entry_d[e * m_n + k] = v.get("density", names[e], t[e], k).value_or(m_params.density);
        if (m_crumbs) m_entry_g[e * m_n + k] = v.get("gamma", names[e], t[e], k).value_or(m_gamma);
      }
      if (m_plan.entries[e].action == Action::average)
        check_tensor_weights(task_row(m_o), v.source, names[e], std::span<const double>(&m_entry_w[e * m_n], m_n),
                             m_params.normalize == Normalize::yes);
    }
  }
  const double* densities_of(std::size_t index) const {
    return m_entry_d.empty() ? nullptr : m_entry_d.data() + index * m_n;
  }
  double density_of(std::size_t index, std::size_t k) const {
    return m_entry_d.empty() ? m_params.density : m_entry_d[index * m_n + k];
  }
  double gamma_of(std::size_t index, std::size_t k) const {
    return m_entry_g.empty() ? m_gamma : m_entry_g[index * m_n + k];
  }

  // Collects, from the block at hand, the candidates of every cut of tensor `index` still pending.
  void take_candidates(std::size_t index, std::uint64_t offset, const BlockInputs& in) {
    for (std::size_t k = 0; k < m_n; ++k)
      for (std::size_t j = 0; j < m_per; ++j)
        if (const Cut& c = m_cuts[(index * m_n + k) * m_per + j]; pending(c))
          m_backend.magnitude_candidates(in, k, c.bucket, offset, m_candidates[k * m_per + j]);
  }

  // How many of input k's values rank at or above each cut of tensor `index` (n values): TIES keeps the
  // floor(D * n) largest, at least one; breadcrumbs drops the largest d = n - bottom - floor(D * n), with bottom =
  // max(0, n - floor(D * n) - floor(gamma * n)), and keeps the next floor(D * n) (none when that is 0, as
  // mergekit); with D >= 1 it keeps everything. Sets `short_of` when the density asked for less than one value.
  std::array<std::uint64_t, 2> cut_counts(std::size_t index, std::size_t k, std::uint64_t n, bool& short_of) const {
    const double density = density_of(index, k);
    auto keep = static_cast<std::uint64_t>(density * static_cast<double>(n));  // mergekit's k
    if (keep == 0 && n > 0) short_of = true;
    if (!m_crumbs) return {std::max<std::uint64_t>(keep, n > 0 ? 1 : 0), 0};
    if (density >= 1) return {n, 0};
    const auto top = static_cast<std::uint64_t>(gamma_of(index, k) * static_cast<double>(n));
    const std::uint64_t bottom = keep + top >= n ? 0 : n - keep - top;
    const std::uint64_t dropped = n - bottom - keep;
    return {dropped + keep, dropped};
  }

  // Whether pass 1 must still find this cut's threshold among its bucket's values.
  static bool pending(const Cut& c) { return c.bucket != k_none; }

  // The smallest double in magnitude bucket b (its top 16 bits are b, the rest zero).
  static double bucket_floor(std::size_t b) {
    const std::uint64_t bits = static_cast<std::uint64_t>(b) << 48;
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }

  std::size_t entry_index(const PlanEntry& entry) const {
    return static_cast<std::size_t>(&entry - m_plan.entries.data());
  }

  // Turns what the pass saw of the current tensor into its cuts.
  void finish_entry(int pass) {
    if (m_current == k_none) return;
    const std::uint64_t n = m_plan.entries[m_current].info.count();
    bool short_of = false;
    for (std::size_t k = 0; k < m_n; ++k) {
      const std::array<std::uint64_t, 2> counts = cut_counts(m_current, k, n, short_of);
      for (std::size_t j = 0; j < m_per; ++j) {
        Cut& c = m_cuts[(m_current * m_n + k) * m_per + j];
        if (pass == 0)
          c = first_cut(m_hist.data() + k * k_magnitude_buckets, counts[j]);
        else if (pending(c))
          exact_cut(c, m_candidates[k * m_per + j]);
      }
    }
    if (short_of && pass == 0)
      m_decisions.emplace_back(m_current, std::string(m_crumbs ? "breadcrumbs: " : "ties: ") +
                                              m_plan.entries[m_current].info.name + ": density x " + std::to_string(n) +
                                              " values is less than one; " +
                                              (m_crumbs ? "kept no entry of that task vector (as mergekit)"
                                                        : "kept the largest entry of each task vector"));
  }

  // The cut below the `count` largest nonzero values, from their histogram: exact when it falls between buckets
  // (every value kept when count exceeds them), else pending the candidates of the bucket it falls in.
  static Cut first_cut(const std::uint64_t* hist, std::uint64_t count) {
    Cut c;  // keeps every value unless the histogram finds a bucket
    if (count == 0) c.threshold = std::numeric_limits<double>::quiet_NaN();
    std::uint64_t above = 0;
    for (std::size_t b = k_magnitude_buckets; count > 0 && b-- > 0;) {
      if (above + hist[b] >= count) {
        c.need = count - above;
        if (c.need < hist[b])
          c.bucket = b;
        else
          c.threshold = bucket_floor(b);  // the whole bucket is kept: no candidates needed
        break;
      }
      above += hist[b];
    }
    return c;
  }

  // Settles a pending cut: the need-th largest candidate (equal values by increasing index).
  static void exact_cut(Cut& c, std::vector<Magnitude>& v) {
    WAVG_ASSERT(v.size() >= c.need && c.need > 0);
    const auto nth = v.begin() + static_cast<std::ptrdiff_t>(c.need - 1);
    std::nth_element(v.begin(), nth, v.end(), [](const Magnitude& a, const Magnitude& b) {
      return a.value > b.value || (a.value == b.value && a.index < b.index);
    });
    c.threshold = nth->value;
    c.tie_last = nth->index;
    c.bucket = k_none;
  }

  Backend& m_backend;
  const Plan& m_plan;
  TaskOptions m_o;
  std::size_t m_n = 0;
  std::vector<double> m_weights;
  TaskCombineParams m_params;
  bool m_crumbs = false;  // breadcrumbs(-ties): a second cut per input drops the largest values
  std::size_t m_per = 1;  // cuts per input
  double m_gamma = 0.01;
  std::vector<Cut> m_cuts;  // per (plan entry, input, cut)
  std::size_t m_current = k_none;
  std::vector<std::uint64_t> m_hist;                 // the current tensor's histograms, one per input
  std::vector<std::vector<Magnitude>> m_candidates;  // the current tensor's candidates, per (input, cut)
  std::vector<double> m_threshold;
  std::vector<std::uint64_t> m_tie_last;
  DareRescale m_rescale = DareRescale::inverse_density;
  std::vector<double> m_l1;     // DARE's L1 rescale: per (plan entry, input), |tau|_1 and |masked tau|_1
  std::vector<double> m_scale;  // the current tensor's rescale factors, one per input
  std::vector<std::pair<std::size_t, std::string>> m_decisions;  // per (plan entry, line)
  std::vector<bool> m_settled;                                   // per plan entry: whether its cuts or norms were taken
  std::vector<std::uint64_t> m_kept;  // DARE: the drop mask of the tensor settled in combine()
  std::vector<double> m_entry_w, m_entry_d, m_entry_g,
      m_entry_lambda;  // per-tensor values (recipe): per (entry, input)
};

}  // namespace

std::unique_ptr<Method> make_task_vectors(const MethodArgs& a) {
  return std::make_unique<TaskVectors>(a.backend, a.plan, *a.task);
}

}  // namespace wavg
