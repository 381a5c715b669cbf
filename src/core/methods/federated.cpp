// The federated merge as one Method. How it streams:
//
//   pass "norms"      (with --clip)  sum of squares of every client's update over the whole model
//                                    -> the clipping scales s_k = min(1, C / ||u_k||)
//   pass "distances"  (krum, multi-krum, geometric-median)  squared distances between the clipped updates
//                                    -> Krum's selection, or Weiszfeld's coefficients (see robust.cpp)
//   combine           per block: aggregate the clipped updates y_k = s_k u_k (a weighted sum, or an order
//                     statistic per element), add the noise, and let the server optimizer turn the aggregate
//                     into the step added to the base; the moments are read from the old state and written to
//                     the new one block by block.
//
// Everything after the passes is element-wise, so memory stays flat: each block is processed in sub-blocks of at
// most k_sub elements, for which the aggregate and the two moments are held as doubles.

#include <cstdio>

#include "wavg/error.hpp"
#include "wavg/federated.hpp"

namespace wavg {

namespace {

constexpr std::uint64_t k_sub = 1 << 18;

enum class Pass { norms, distances };

std::string optimizer_name(ServerOptKind k) {
  return k == ServerOptKind::none ? "none" : std::string(name_of(k_server_opt_names, k));
}

std::string list_inputs(const std::vector<std::size_t>& picked) {
  std::string s;
  for (std::size_t k : picked) {
    if (!s.empty()) s += ',';
    s += std::to_string(k + 1);
  }
  return s;
}

class Federated final : public FederatedMethod {
 public:
  Federated(Backend& backend, const Plan& plan, const FederatedOptions& o, ServerState* state)
      : m_backend(backend), m_plan(plan), m_o(o), m_state(state) {
    const std::size_t n = plan.entries.empty() ? 0 : plan.entries.front().source.size();
    m_n = n;
    m_weights = o.weights.empty() ? std::vector<double>(n, 1.0) : o.weights;
    m_scales.assign(n, 1.0);
    if (o.privacy.clip > 0) m_passes.push_back(Pass::norms);
    const Reduce reduce = o.robust.method->reduce;
    if (reduce == Reduce::krum || reduce == Reduce::geometric_median) m_passes.push_back(Pass::distances);
    // The mean's coefficients are the weights; the passes replace them for the other weighted sums.
    m_coeffs = m_weights;
    for (double w : m_weights) m_divisor += w;
    // Staleness scales each update but not the divisor: a stale update counts s(tau) / K, not 1 / K.
    for (std::size_t k = 0; k < o.staleness.size(); ++k) m_coeffs[k] *= o.staleness[k];
    if (o.privacy.noise_multiplier > 0) {
      m_sigma = o.privacy.noise_multiplier * o.privacy.clip / static_cast<double>(n);
      m_seed = o.privacy.seed ? *o.privacy.seed : random_seed();
    }
  }

  std::string describe() const override {
    std::string s;
    const RobustOptions& r = m_o.robust;
    WAVG_ASSERT(r.method->family == Family::federated);
    switch (r.method->reduce) {
      case Reduce::mean: s = m_o.weights.empty() ? "mean" : "weighted mean"; break;
      case Reduce::median: s = m_o.weights.empty() ? "median" : "weighted median"; break;
      case Reduce::trimmed_mean:
        s = "trimmed mean (" + std::to_string(trim_count(*r.trim, m_n)) + " cut at each end)";
        break;
      case Reduce::krum:  // krum, or multi-krum with --select M
        s = std::string(r.method->name) + " (F=" + std::to_string(*r.byzantine) +
            (r.select ? ", M=" + std::to_string(*r.select) : "") + ")";
        break;
      case Reduce::geometric_median: s = "geometric median"; break;
    }
    if (m_o.has_base || m_o.inputs == InputKind::deltas) s += " of updates";
    if (!m_o.staleness.empty()) s += ", staleness-weighted";
    if (m_o.privacy.clip > 0) s += ", clipped";
    if (m_sigma > 0) s += ", noised";
    if (m_o.server.kind != ServerOptKind::none) s += ", server " + optimizer_name(m_o.server.kind);
    return s;
  }

  bool wants_pass(int pass) override { return static_cast<std::size_t>(pass) < m_passes.size(); }

  void observe(int pass, const PlanEntry&, std::uint64_t, const BlockInputs& in) override {
    const BlockInputs u = updates(in);
    if (m_passes[static_cast<std::size_t>(pass)] == Pass::norms) {
      m_sum_squares.resize(m_n, 0.0);
      m_backend.update_sum_squares(u, m_sum_squares.data());
    } else {
      m_dist.resize(m_n * m_n, 0.0);
      m_backend.update_sq_distances(u, m_scales.data(), m_dist.data());
    }
  }

  void end_pass(int pass) override {
    if (m_passes[static_cast<std::size_t>(pass)] == Pass::norms) {
      m_sum_squares.resize(m_n, 0.0);
      m_scales = clip_scales(m_sum_squares, m_o.privacy.clip);
      for (double s : m_scales) m_clipped += s < 1;
      return;
    }
    m_dist.resize(m_n * m_n, 0.0);
    const RobustOptions& r = m_o.robust;
    if (r.method->reduce == Reduce::geometric_median) {
      m_weiszfeld = weiszfeld(m_dist, m_weights, r.gm_tol, r.gm_max_iter, r.gm_eps);
      m_coeffs = m_weiszfeld.coeffs;
      m_divisor = 1;
      return;
    }
    const auto f = static_cast<std::size_t>(*r.byzantine);
    const std::size_t m = r.select ? static_cast<std::size_t>(*r.select) : 1;  // multi-krum's M, krum's one
    m_selected = lowest_scores(krum_scores(m_dist, m_n, f), m);
    m_coeffs.assign(m_n, 0.0);
    m_divisor = 0;
    for (std::size_t k : m_selected) {
      m_coeffs[k] = m_weights[k];
      m_divisor += m_weights[k];
    }
  }

  void combine(const PlanEntry& entry, std::uint64_t offset, const BlockInputs& in, void* out) override {
    const auto index = static_cast<std::size_t>(&entry - m_plan.entries.data());
    const std::size_t elem = dtype_size(in.dtype);
    std::vector<double> scaled(m_n);
    for (std::size_t k = 0; k < m_n; ++k) scaled[k] = m_coeffs[k] * m_scales[k];
    m_pointers.resize(m_n);
    for (std::uint64_t sub = 0; sub < in.count; sub += k_sub) {
      const std::uint64_t count = std::min(k_sub, in.count - sub);
      for (std::size_t k = 0; k < m_n; ++k) m_pointers[k] = static_cast<const char*>(in.data[k]) + sub * elem;
      const void* base = in.base ? static_cast<const char*>(in.base) + sub * elem : nullptr;
      const BlockInputs u = updates({in.dtype, count, m_pointers, base});
      m_agg.resize(count);
      aggregate(u, scaled.data());
      if (m_sigma > 0) m_backend.add_gaussian_noise(m_agg.data(), count, m_sigma, m_seed, index, offset + sub);
      double* m = nullptr;
      double* v = nullptr;
      if (m_state) {
        m_m.resize(count);
        m_v.resize(count);
        m = m_m.data();
        v = m_v.data();
        m_state->read(index, offset + sub, count, m, v);
      } else if (m_o.server.kind != ServerOptKind::none) {
        // No --state: the moments start fresh every round.
        m_m.assign(count, 0.0);
        m_v.assign(count, m_o.server.tau * m_o.server.tau);
        m = m_m.data();
        v = m_v.data();
      }
      m_backend.server_step(m_o.server, count, m_agg.data(), base, in.dtype, m, v, entry.out_dtype,
                            static_cast<char*>(out) + sub * dtype_size(entry.out_dtype));
      if (m_state) m_state->write(index, offset + sub, count, m, v);
    }
  }

  std::vector<std::string> report() const override {
    std::vector<std::string> lines;
    char buf[160];
    if (m_o.privacy.clip > 0) {
      std::snprintf(buf, sizeof buf, "clipped %zu of %zu updates to norm %g (fraction %.3g)", m_clipped, m_n,
                    m_o.privacy.clip, static_cast<double>(m_clipped) / static_cast<double>(m_n));
      lines.emplace_back(buf);
    }
    if (m_sigma > 0) {
      std::snprintf(buf, sizeof buf, "added Gaussian noise, sigma %g per coordinate", m_sigma);
      lines.emplace_back(buf);
    }
    if (!m_o.staleness.empty()) {
      std::string w;
      for (double v : m_o.staleness) {
        std::snprintf(buf, sizeof buf, "%s%g", w.empty() ? "" : ", ", v);
        w += buf;
      }
      lines.push_back("staleness weights s(tau): " + w);
    }
    if (!m_selected.empty()) lines.push_back("selected input(s) " + list_inputs(m_selected));
    if (m_o.robust.method->reduce == Reduce::geometric_median)
      lines.push_back(std::string("Weiszfeld ") + (m_weiszfeld.converged ? "converged" : "stopped unconverged") +
                      " after " + std::to_string(m_weiszfeld.iterations) + " iteration(s)");
    if (m_state)
      lines.push_back("server round " + std::to_string(m_state->rounds() + 1) + " (" + optimizer_name(m_o.server.kind) +
                      "), state saved to " + m_state->path());
    return lines;
  }

 private:
  // The inputs as the kernels' updates: deltas are already updates, so the base is only added back at the end.
  BlockInputs updates(const BlockInputs& in) const {
    BlockInputs u = in;
    if (m_o.inputs == InputKind::deltas) u.base = nullptr;
    return u;
  }

  void aggregate(const BlockInputs& u, const double* scaled_coeffs) {
    switch (m_o.robust.method->reduce) {
      case Reduce::median:
        return m_backend.update_order_statistic(u, m_scales.data(), m_weights.data(), OrderStat::median, 0,
                                                m_agg.data());
      case Reduce::trimmed_mean:
        return m_backend.update_order_statistic(u, m_scales.data(), m_weights.data(), OrderStat::trimmed_mean,
                                                trim_count(*m_o.robust.trim, m_n), m_agg.data());
      default: return m_backend.update_combine(u, scaled_coeffs, m_divisor, m_agg.data());
    }
  }

  Backend& m_backend;
  const Plan& m_plan;
  FederatedOptions m_o;
  ServerState* m_state;
  std::size_t m_n = 0;
  std::vector<Pass> m_passes;
  std::vector<double> m_weights, m_scales, m_coeffs, m_sum_squares, m_dist;
  double m_divisor = 0;
  double m_sigma = 0;
  std::uint64_t m_seed = 0;
  std::size_t m_clipped = 0;
  std::vector<std::size_t> m_selected;
  WeiszfeldResult m_weiszfeld;
  std::vector<const void*> m_pointers;
  std::vector<double> m_agg, m_m, m_v;
};

}  // namespace

std::unique_ptr<FederatedMethod> make_federated(Backend& backend, const Plan& plan, const FederatedOptions& options,
                                                ServerState* state) {
  return std::make_unique<Federated>(backend, plan, options, state);
}

}  // namespace wavg
