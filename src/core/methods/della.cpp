// DELLA (Deep et al., 2024, "DELLA-Merging: Reducing Interference in Model Merging through Magnitude-Based
// Sampling") as mergekit 0.1.5 runs it: sparsify.della_magprune on each task vector tau_k = x_k - base, then its
// generalized task arithmetic (della: TIES's sign election and normalisation, like dare-ties with --normalize;
// della-linear: the weighted sum, like dare-linear). della_magprune keeps tau_k[i] at random with a probability
// that grows with the rank of |tau_k[i]| within its row:
//
//   p = (D - e) + 2e (r - 1) / (n - 1)       r = 1 for the smallest magnitude of the row, n for the largest
//
// A row is what mergekit ranks along: the tensor's dimension 1, so one row of a 2-D tensor (out, in) is one output
// unit's n = in entries; a 1-D tensor is one row; in a tensor of more dimensions the entries that differ only in
// dimension 1 (stride: the product of the later dimensions). mergekit ranks with torch's unstable argsort; wavg
// ranks equal magnitudes by increasing index (the same ranks where no two magnitudes of a row are equal).
// Everything else follows DARE (task_vectors.cpp): the kept entries are multiplied by the tensor's L1-norm ratio
// |tau|_1 / |masked tau|_1 (none when either is below 1e-7; --rescale none: by 1), and tau_k[i] is kept when word
// k % 4 of philox_block(seed, stream + (k / 4 << 32), i), over 2^32, is below p (the stream is the tensor's plan
// index). With e = 0 every p is D: DARE's mask, entry for entry. Density 1 keeps the task vector whole, unscaled.
//
// Rows need whole rows in a block: block_unit asks the engine for blocks of whole dimension-0 slices. The L1 norms
// are whole-tensor sums (pass 0); each row's sum is taken in element order and the rows' sums are added in row
// order, so the bits do not depend on the block size or the thread count. The mask and the ranking run here on the
// CPU over the block's host memory; the sparsified task vectors (double) then go through Backend::task_combine
// (no base: it returns lambda times the combination), and the base is added here, rounded once to the output dtype.

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "wavg/dispatch_float.hpp"
#include "wavg/element_math.hpp"
#include "wavg/error.hpp"
#include "wavg/method_spec.hpp"
#include "wavg/philox.hpp"
#include "wavg/task_methods.hpp"
#include "wavg/tensor_values.hpp"

namespace wavg {

namespace {

constexpr double k_l1_eps = 1e-7;  // mergekit's rescaled_masked_tensor: no rescale below it
// Elements per task_combine call in combine(): bounds the scratch (inputs + 1 arrays of doubles) at any block size.
constexpr std::uint64_t k_chunk = 1 << 16;

// How an entry's elements fall into rows: `units` slices along dimension 0, each holding `inner` rows of `len`
// entries at stride `inner` (inner = 1: each slice is one contiguous row).
struct Rows {
  std::uint64_t len = 1, inner = 1, units = 0;
  std::uint64_t unit() const { return len * inner; }
};

Rows rows_of(const TensorInfo& info) {
  Rows r;
  const Shape& s = info.shape;
  const std::uint64_t n = info.count();
  if (s.size() == 1) r.len = s[0];
  if (s.size() >= 2) {
    r.len = s[1];
    for (std::size_t d = 2; d < s.size(); ++d) r.inner *= s[d];
  }
  if (r.unit() == 0) return Rows{1, 1, n};
  r.units = n / r.unit();
  return r;
}

// One input's settings for one tensor.
struct Setting {
  double density = 1, epsilon = k_della_epsilon, scale = 1;
  std::uint64_t seed = 0, stream = 0;
  unsigned word = 0;
};

// A magnitude's place in its row: the bits of |tau| (a non-negative double's bits order as its value does, and a
// NaN's above every number, as torch sorts NaN last), then the entry's index in the row.
struct Ranked {
  std::uint64_t bits;
  std::uint32_t m;
};

// Sorts a row's magnitudes, given in index order, by bits: a stable LSD radix sort a byte at a time (bytes that
// every key shares skipped), so equal magnitudes stay in index order. About 3x std::sort's speed on rows of
// thousands, where the sort is most of della's time.
void sort_row(std::vector<Ranked>& a, std::vector<Ranked>& spare) {
  const std::size_t n = a.size();
  std::array<std::array<std::uint32_t, 256>, 8> count{};
  for (const Ranked& r : a)
    for (int d = 0; d < 8; ++d) ++count[d][(r.bits >> (8 * d)) & 255];
  spare.resize(n);
  for (int d = 0; d < 8; ++d) {
    std::array<std::uint32_t, 256>& c = count[d];
    if (n == 0 || c[(a[0].bits >> (8 * d)) & 255] == n) continue;
    std::uint32_t sum = 0;
    for (std::uint32_t& x : c) sum += std::exchange(x, sum);
    for (const Ranked& r : a) spare[c[(r.bits >> (8 * d)) & 255]++] = r;
    a.swap(spare);
  }
}

// Writes the sparsified task vector of `units` slices starting at element `first` of the block (its element
// `first` is element offset + first of the tensor) into tau[0..], unscaled (kept entries as they are, dropped ones
// 0), and each slice's (|tau|_1, |kept tau|_1) into l1[2j], l1[2j + 1] when l1 is not null.
template <DType T>
void sparsify(const BlockInputs& in, std::size_t k, const Rows& rows, const Setting& s, std::uint64_t offset,
              std::uint64_t first, std::uint64_t units, double* tau, double* l1) {
  const std::uint64_t unit = rows.unit();
  const void* x = in.data[k];
#pragma omp parallel if (units * unit >= (1u << 15))
  {
    std::vector<double> row(rows.len);
    std::vector<Ranked> order(rows.len), spare;
    std::vector<std::uint32_t> word(rows.len);
#pragma omp for schedule(static)
    for (std::int64_t j = 0; j < static_cast<std::int64_t>(units); ++j) {
      const std::uint64_t slice = first + static_cast<std::uint64_t>(j) * unit;
      double before = 0, after = 0;
      for (std::uint64_t c = 0; c < rows.inner; ++c) {
        const std::uint64_t start = slice + c;  // the row's entry m is element start + m * inner of the block
        for (std::uint64_t m = 0; m < rows.len; ++m) {
          const std::uint64_t e = start + m * rows.inner;
          row[m] = load<T>(x, e) - (in.base ? load<T>(in.base, e) : 0.0);
          order[m] = {double_bits(std::fabs(row[m])), static_cast<std::uint32_t>(m)};
        }
        sort_row(order, spare);
        for (std::uint64_t m = 0; m < rows.len; ++m)
          word[m] = philox_block(s.seed, s.stream, offset + start + m * rows.inner).v[s.word];
        const double spread = static_cast<double>(rows.len - 1);
        for (std::uint64_t r = 0; r < rows.len; ++r) {
          const std::uint32_t m = order[r].m;
          // A row of one entry has no rank (mergekit's is 0/0): it is kept with probability D.
          const double p =
              rows.len > 1 ? (s.density - s.epsilon) + static_cast<double>(r) / spread * 2 * s.epsilon : s.density;
          tau[start + m * rows.inner - first] = static_cast<double>(word[m]) * 0x1p-32 < p ? row[m] : 0.0;
        }
        if (l1)
          for (std::uint64_t m = 0; m < rows.len; ++m) {
            before += std::fabs(row[m]);
            after += std::fabs(tau[start + m * rows.inner - first]);
          }
      }
      if (l1) {
        l1[2 * j] = before;
        l1[2 * j + 1] = after;
      }
    }
  }
}

class Della final : public Method {
 public:
  Della(Backend& backend, const Plan& plan, const TaskOptions& o) : m_backend(backend), m_plan(plan), m_o(o) {
    m_n = plan.entries.empty() ? 0 : plan.entries.front().source.size();
    m_weights = o.weights.empty() ? std::vector<double>(m_n, 1.0) : o.weights;
    m_seed = o.seed ? *o.seed : random_seed();
    m_rescale = o.rescale.value_or(DareRescale::l1);
    m_params.lambda = o.param("lambda").value_or(1.0);
    const MethodSpec& row = *o.method;  // della's sign consensus and normalisation, della-linear's none
    m_params.consensus = row.consensus;
    m_params.normalize = o.normalize.value_or(row.normalize_default) ? Normalize::yes : Normalize::no;
    const std::size_t entries = plan.entries.size();
    m_w.resize(entries * m_n);
    m_d.resize(entries * m_n);
    m_e.resize(entries * m_n);
    m_lambda.assign(entries, m_params.lambda);
    std::vector<std::string> names;
    for (const PlanEntry& e : plan.entries) names.push_back(e.info.name);
    const std::vector<double> t = o.values ? layer_positions(names) : std::vector<double>(entries, 0.0);
    for (std::size_t e = 0; e < entries; ++e) {
      const auto get = [&](const char* key, double fallback, std::optional<std::size_t> k) {
        return o.values ? o.values->get(key, names[e], t[e], k).value_or(fallback) : fallback;
      };
      m_lambda[e] = get("lambda", m_params.lambda, std::nullopt);
      const bool averaged = plan.entries[e].action == Action::average && plan.entries[e].same_as == k_no_entry;
      bool unranked = false;
      for (std::size_t k = 0; k < m_n; ++k) {
        m_w[e * m_n + k] = get("weight", m_weights[k], k);
        m_d[e * m_n + k] = get("density", o.param("density").value_or(1.0), k);
        m_e[e * m_n + k] = get("epsilon", o.param("epsilon").value_or(k_della_epsilon), k);
        if (!averaged) continue;
        if (o.values)  // a recipe's values may differ per tensor: each is checked (the options were, as a whole)
          if (const std::string p = della_problem(m_d[e * m_n + k], m_e[e * m_n + k]); !p.empty())
            throw Error(ExitCode::usage, o.values->source,
                        "tensor " + names[e] + " of models[" + std::to_string(k) + "]: " + p);
        unranked |= m_d[e * m_n + k] < 1 && m_e[e * m_n + k] > 0;
        m_drops |= m_d[e * m_n + k] < 1;
      }
      if (averaged && o.values)
        check_tensor_weights(*o.method, o.values->source, names[e], std::span<const double>(&m_w[e * m_n], m_n),
                             m_params.normalize == Normalize::yes);
      const Rows rows = rows_of(plan.entries[e].info);
      if (averaged && unranked && rows.len == 1 && rows.units > 0)
        m_decisions.push_back("della: " + names[e] + ": rows of one entry have no rank; kept each entry with " +
                              "probability density (mergekit's rank is 0/0 there)");
    }
    if (m_rescale == DareRescale::l1) m_l1.assign(entries * m_n * 2, 0.0);
  }

  std::string describe() const override {
    std::string s(m_o.method->name);
    if (const auto d = m_o.param("density")) s += ", density " + parameter_text(*d);
    s += ", epsilon " + parameter_text(m_o.param("epsilon").value_or(k_della_epsilon));
    s += ", seed " + std::to_string(m_seed) + ", rescale " + std::string(name_of(k_dare_rescale_names, m_rescale));
    return s + describe_common(m_o);
  }

  std::vector<std::string> decisions() const override { return m_decisions; }
  std::vector<std::string> report() const override {
    if (m_decisions.empty()) return {};
    return {"della: " + std::to_string(m_decisions.size()) +
            " tensor(s) with rows of one entry kept each entry with probability density; -v names them"};
  }

  std::uint64_t block_unit(const PlanEntry& entry) const override {
    return entry.action == Action::average ? rows_of(entry.info).unit() : 1;
  }

  bool wants_pass(int pass) override { return pass == 0 && m_rescale == DareRescale::l1 && m_drops; }

  void observe(int, const PlanEntry& entry, std::uint64_t offset, const BlockInputs& in) override {
    const std::size_t index = entry_index(entry);
    const Rows rows = rows_of(entry.info);
    const std::uint64_t unit = rows.unit(), units = in.count / unit,
                        per_chunk = std::max<std::uint64_t>(1, k_chunk / unit);
    WAVG_ASSERT(offset % unit == 0 && units * unit == in.count);
    for (std::size_t k = 0; k < m_n; ++k) {
      const Setting s = setting(index, k);
      if (s.density >= 1) continue;
      double* l1 = m_l1.data() + (index * m_n + k) * 2;
      for (std::uint64_t u0 = 0; u0 < units; u0 += per_chunk) {
        const std::uint64_t n = std::min(per_chunk, units - u0);
        m_scratch.resize(n * unit);
        m_slices.resize(n * 2);
        dispatch_float(in.dtype, [&]<DType T>() {
          sparsify<T>(in, k, rows, s, offset, u0 * unit, n, m_scratch.data(), m_slices.data());
        });
        for (std::uint64_t j = 0; j < n; ++j) {  // in slice order: the same sums for any block size
          l1[0] += m_slices[2 * j];
          l1[1] += m_slices[2 * j + 1];
        }
      }
    }
  }

  void combine(const PlanEntry& entry, std::uint64_t offset, const BlockInputs& in, void* out) override {
    WAVG_ASSERT(in.base && in.data.size() == m_n);
    const std::size_t index = entry_index(entry);
    const Rows rows = rows_of(entry.info);
    const std::uint64_t unit = rows.unit(), units = in.count / unit;
    WAVG_ASSERT(offset % unit == 0 && units * unit == in.count);
    const std::uint64_t per_chunk = std::max<std::uint64_t>(1, k_chunk / unit);
    std::vector<Setting> settings;
    for (std::size_t k = 0; k < m_n; ++k) settings.push_back(setting(index, k));
    TaskCombineParams p = m_params;
    p.weights = m_w.data() + index * m_n;
    p.lambda = m_lambda[index];
    for (std::uint64_t u0 = 0; u0 < units; u0 += per_chunk) {
      const std::uint64_t first = u0 * unit, count = std::min(per_chunk, units - u0) * unit;
      m_scratch.resize((m_n + 1) * count);
      std::vector<const void*> tau(m_n);
      for (std::size_t k = 0; k < m_n; ++k) {
        double* t = m_scratch.data() + k * count;
        tau[k] = t;
        dispatch_float(in.dtype, [&]<DType T>() {
          if (settings[k].density >= 1) {  // mergekit returns the task vector whole
            for (std::uint64_t i = 0; i < count; ++i)
              t[i] = load<T>(in.data[k], first + i) - load<T>(in.base, first + i);
            return;
          }
          sparsify<T>(in, k, rows, settings[k], offset, first, count / unit, t, nullptr);
          if (settings[k].scale != 1)
            for (std::uint64_t i = 0; i < count; ++i) t[i] *= settings[k].scale;
        });
      }
      double* mixed = m_scratch.data() + m_n * count;
      const BlockInputs vectors{DType::f64, count, std::span<const void* const>(tau.data(), m_n), nullptr};
      m_backend.task_combine(vectors, p, offset + first, DType::f64, mixed);
      dispatch_float(in.dtype, [&]<DType T>() {
        dispatch_float(entry.out_dtype, [&]<DType O>() {
          for (std::uint64_t i = 0; i < count; ++i) store<O>(out, first + i, load<T>(in.base, first + i) + mixed[i]);
        });
      });
    }
  }

 private:
  std::size_t entry_index(const PlanEntry& entry) const {
    return static_cast<std::size_t>(&entry - m_plan.entries.data());
  }

  // Input k's density, epsilon, rescale factor and Philox keying for tensor `index`.
  Setting setting(std::size_t index, std::size_t k) const {
    Setting s;
    s.density = m_d[index * m_n + k];
    s.epsilon = m_e[index * m_n + k];
    s.seed = m_seed;
    s.stream = index + (static_cast<std::uint64_t>(k / 4) << 32);
    s.word = static_cast<unsigned>(k % 4);
    if (!m_l1.empty()) {
      // mergekit's rescaled_masked_tensor: no rescale when either norm is below 1e-7.
      const double before = m_l1[(index * m_n + k) * 2], after = m_l1[(index * m_n + k) * 2 + 1];
      if (!(before < k_l1_eps || after < k_l1_eps)) s.scale = before / after;
    }
    return s;
  }

  Backend& m_backend;
  const Plan& m_plan;
  TaskOptions m_o;
  std::size_t m_n = 0;
  std::vector<double> m_weights;
  std::uint64_t m_seed = 0;
  DareRescale m_rescale = DareRescale::l1;
  bool m_drops = false;  // whether any tensor has a density below 1 (else no L1 pass)
  TaskCombineParams m_params;
  std::vector<double> m_w, m_d, m_e, m_lambda;  // per (entry, input); lambda per entry
  std::vector<double> m_l1;                     // per (entry, input): |tau|_1 and |masked tau|_1
  std::vector<double> m_slices, m_scratch;
  std::vector<std::string> m_decisions;
};

}  // namespace

std::unique_ptr<Method> make_della(const MethodArgs& a) {
  return std::make_unique<Della>(a.backend, a.plan, *a.task);
}

}  // namespace wavg
