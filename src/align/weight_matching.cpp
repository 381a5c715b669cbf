// Weight matching (Ainsworth, Hayase and Srinivasa, "Git Re-Basin", ICLR 2023, algorithms 1 and 3).
//
// For a group p of n units, the score of giving B's unit j the place of A's unit i is the inner product of
// everything A attaches to unit i with everything B attaches to unit j, over every parameter tensor p permutes:
// S_p = sum over (tensor, axis) of A unfolded along that axis times B unfolded along it, transposed, where B's
// other axes are first permuted by the current permutations of their groups. Maximising trace(P^T S_p) over
// permutations P is a linear assignment problem (lap.cpp). Solving one group changes the others' scores, so groups
// are visited in a random order until a full pass changes nothing. A new permutation is kept only when it scores
// strictly more than the current one, so ties cannot make the search cycle.
//
// The products are float GEMMs by Eigen (threads by OpenMP; built for AVX2 and AVX-512 too and picked at run time,
// gemm.hpp): two per hidden Dense layer and pass, which is where the time goes for wide layers (README: two 8-layer
// 4096-wide MLPs). A term whose other axes' permutations have
// not changed since it was last computed is reused, and a matrix's term whose other axis moved few units is
// updated by the rows that moved.
//
// MergeMany aligns each of N models in turn to the mean of the others (themselves permuted as found so far), until
// a round over all models changes no permutation.

#include <Eigen/Core>

#include <cmath>
#include <map>

#include "align/gemm.hpp"
#include "align/lap.hpp"
#include "align/permute.hpp"
#include "wavg/counter_rng.hpp"
#include "wavg/error.hpp"

namespace wavg::align {

namespace {

using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr double k_parallel_flops = 1e8;  // a few milliseconds on one core

class Matcher {
 public:
  Matcher(const PermSpec& spec, const std::vector<Shape>& shapes, const Weights& a, const Weights& b)
      : m_spec(spec), m_shapes(shapes), m_a(a), m_b(b), m_uses(spec.group_names.size()) {
    for (std::size_t t = 0; t < spec.tensors.size(); ++t) {
      const TensorPerm& tp = spec.tensors[t];
      if (tp.role != Role::parameter) continue;
      for (std::size_t ax = 0; ax < tp.axes.size(); ++ax)
        if (tp.axes[ax].group >= 0) m_uses[static_cast<std::size_t>(tp.axes[ax].group)].push_back({t, ax});
    }
  }

  MatchResult run(const MatchOptions& options, std::vector<Perm> perms) {
    MatchResult result;
    result.perms = std::move(perms);
    const std::size_t groups = m_spec.group_names.size();
    for (std::size_t pass = 0; pass < options.max_iter; ++pass) {
      ++result.iterations;
      bool changed = false;
      for (std::size_t g : permutation(groups, hash_key(options.seed, 0xa119, pass)))
        changed |= solve_group(g, result.perms);
      if (!changed) {
        result.converged = true;
        break;
      }
    }
    return result;
  }

 private:
  struct Use {
    std::size_t tensor, axis;
  };
  using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  struct Term {
    std::vector<Perm> other;  // the permutations of the tensor's other axes it was computed with
    MatrixD value;            // row-major, as the products and the scores are: sums run in memory order
  };

  bool solve_group(std::size_t g, std::vector<Perm>& perms) {
    const std::uint64_t n = m_spec.group_sizes[g];
    std::vector<double>& flat = m_score;  // row-major, as the LAP takes it
    flat.assign(n * n, 0.0);
    Eigen::Map<MatrixD> score(flat.data(), static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
    for (const Use& u : m_uses[g]) score += term(u, perms);
    for (const double v : flat)
      if (!std::isfinite(v))
        throw Error(ExitCode::runtime, "",
                    "weight matching: group " + m_spec.group_names[g] + " has non-finite weights (NaN or infinity)");
    const Perm next = solve_lap_max(flat, n);
    double old_score = 0, new_score = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      old_score += flat[i * n + perms[g][i]];
      new_score += flat[i * n + next[i]];
    }
    if (!(new_score > old_score + 1e-12 * std::max(1.0, std::abs(old_score)))) return false;
    perms[g] = next;
    return true;
  }

  // S += A unfolded along u.axis times B (other axes permuted) unfolded along it, transposed.
  const MatrixD& term(const Use& u, const std::vector<Perm>& perms) {
    const TensorPerm& tp = m_spec.tensors[u.tensor];
    const Shape& shape = m_shapes[u.tensor];
    std::vector<Perm> other;
    for (std::size_t ax = 0; ax < shape.size(); ++ax)
      if (ax != u.axis && tp.axes[ax].group >= 0) other.push_back(perms[static_cast<std::size_t>(tp.axes[ax].group)]);
    const auto key = std::make_pair(u.tensor, u.axis);
    auto it = m_terms.find(key);
    if (it != m_terms.end() && it->second.other == other) return it->second.value;
    if (it != m_terms.end() && update_term(u, it->second, other)) return it->second.value;

    const std::vector<float>& a = m_a.tensors[u.tensor];
    const std::vector<float>& b = m_b.tensors[u.tensor];
    const std::vector<IndexMap> maps = tensor_maps(tp, shape, perms, u.axis);
    bool any = false;
    for (const IndexMap& m : maps) any |= !m.empty();
    const float* bp = b.data();
    if (any) {
      m_moved.resize(b.size());
      permute_bytes(reinterpret_cast<const unsigned char*>(b.data()), reinterpret_cast<unsigned char*>(m_moved.data()),
                    shape, sizeof(float), maps);
      bp = m_moved.data();
    }
    const auto n = static_cast<Eigen::Index>(m_spec.group_sizes[static_cast<std::size_t>(tp.axes[u.axis].group)]);
    std::uint64_t pre = tp.axes[u.axis].outer, post = tp.axes[u.axis].inner;
    for (std::size_t ax = 0; ax < u.axis; ++ax) pre *= shape[ax];
    for (std::size_t ax = u.axis + 1; ax < shape.size(); ++ax) post *= shape[ax];
    m_product.setZero(n, n);
    const auto un = static_cast<std::uint64_t>(n);
    add_score_product(a.data(), bp, pre, un, post, m_product.data(), threads_for(pre, un, post));
    Term& t = m_terms[key];
    t.other = std::move(other);
    t.value = m_product.cast<double>();
    return t.value;
  }

  // Brings a matrix's term up to date when the permutation of its other axis moved few units: only the rows (or
  // columns) of B that moved contribute a change, T += A_K^T (B_new(K) - B_old(K)), a product |K| / m the size of
  // recomputing. Later passes move few units, so this is what makes them cheap. Returns false when it does not pay.
  bool update_term(const Use& u, Term& term, std::vector<Perm>& other) {
    const TensorPerm& tp = m_spec.tensors[u.tensor];
    const Shape& shape = m_shapes[u.tensor];
    if (shape.size() != 2 || other.size() != 1 || term.other.size() != 1) return false;
    const std::size_t o = 1 - u.axis;
    if (tp.axes[o].outer != 1 || tp.axes[o].inner != 1) return false;
    const Perm &before = term.other[0], &after = other[0];
    std::vector<Eigen::Index> changed;
    for (std::size_t k = 0; k < after.size(); ++k)
      if (before[k] != after[k]) changed.push_back(static_cast<Eigen::Index>(k));
    if (changed.size() * 2 > after.size()) return false;
    const auto rows = static_cast<Eigen::Index>(shape[0]), cols = static_cast<Eigen::Index>(shape[1]);
    const Eigen::Map<const MatrixF> a(m_a.tensors[u.tensor].data(), rows, cols);
    const Eigen::Map<const MatrixF> b(m_b.tensors[u.tensor].data(), rows, cols);
    const auto k = static_cast<Eigen::Index>(changed.size());
    if (u.axis == 1) {  // T[i][j] = sum_r A[r][i] B[perm(r)][j]: rows r of the other axis moved
      MatrixF ak(k, cols), d(k, cols);
      for (Eigen::Index r = 0; r < k; ++r) {
        const auto row = static_cast<std::size_t>(changed[static_cast<std::size_t>(r)]);
        ak.row(r) = a.row(static_cast<Eigen::Index>(row));
        d.row(r) = b.row(after[row]) - b.row(before[row]);
      }
      add_update(ak.data(), d.data(), static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(cols), 1, term);
    } else {  // T[i][j] = sum_c A[i][c] B[j][perm(c)]: columns c moved
      MatrixF ak(rows, k), d(rows, k);
      for (Eigen::Index c = 0; c < k; ++c) {
        const auto col = static_cast<std::size_t>(changed[static_cast<std::size_t>(c)]);
        ak.col(c) = a.col(static_cast<Eigen::Index>(col));
        d.col(c) = b.col(after[col]) - b.col(before[col]);
      }
      add_update(ak.data(), d.data(), 1, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(k), term);
    }
    term.other = std::move(other);
    return true;
  }

  // term.value += the score product of a and b (gemm.hpp), threaded when it is large.
  void add_update(const float* a, const float* b, std::uint64_t pre, std::uint64_t n, std::uint64_t post, Term& term) {
    m_product.setZero(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
    add_score_product(a, b, pre, n, post, m_product.data(), threads_for(pre, n, post));
    term.value += m_product.cast<double>();
  }

  // Eigen runs a product on every OpenMP thread unless it is tiny; for small layers waking the threads costs more
  // than the product (on a busy machine, 30 times more: the threads spin waiting for cores), so small ones stay
  // on this thread.
  static int threads_for(std::uint64_t pre, std::uint64_t n, std::uint64_t post) {
    const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(pre * post);
    return flops < k_parallel_flops ? 1 : 0;
  }

  const PermSpec& m_spec;
  const std::vector<Shape>& m_shapes;
  const Weights& m_a;
  const Weights& m_b;
  std::vector<std::vector<Use>> m_uses;
  std::map<std::pair<std::size_t, std::size_t>, Term> m_terms;
  // Scratch kept between groups and passes: buffers of hundreds of MB, allocated afresh each time, cost more in
  // page faults (system time) than filling them does (134M benchmark: 12 s of system CPU).
  std::vector<double> m_score;  // the group's scores
  std::vector<float> m_moved;   // B's tensor with its other axes permuted
  MatrixF m_product;            // one product, in float
};

}  // namespace

MatchResult weight_matching(const PermSpec& spec, const Weights& a, const Weights& b, const MatchOptions& options,
                            std::vector<Perm> start) {
  if (start.empty()) start = identity_perms(spec);
  Matcher matcher(spec, a.shapes, a, b);
  return matcher.run(options, std::move(start));
}

MergeManyResult merge_many(const PermSpec& spec, const std::vector<Weights>& models, const MatchOptions& options) {
  MergeManyResult result;
  const std::size_t k_models = models.size();
  WAVG_ASSERT(k_models >= 2);
  result.perms.assign(k_models, identity_perms(spec));
  std::vector<Weights> aligned = models;
  for (std::size_t round = 0; round < options.max_iter; ++round) {
    ++result.iterations;
    bool changed = false;
    for (std::size_t k : permutation(k_models, hash_key(options.seed, 0x3e79, round))) {
      Weights mean = models[k];  // same shapes; the values are replaced by the mean of the others
      for (std::size_t t = 0; t < mean.tensors.size(); ++t) {
        std::vector<float>& m = mean.tensors[t];
        for (std::size_t e = 0; e < m.size(); ++e) {
          double sum = 0;
          for (std::size_t l = 0; l < k_models; ++l)
            if (l != k) sum += aligned[l].tensors[t][e];
          m[e] = static_cast<float>(sum / static_cast<double>(k_models - 1));
        }
      }
      MatchOptions inner = options;
      inner.seed = hash_key(options.seed, round, k);
      MatchResult r = weight_matching(spec, mean, models[k], inner, result.perms[k]);
      if (r.perms != result.perms[k]) {
        changed = true;
        result.perms[k] = std::move(r.perms);
        aligned[k] = permute_weights(spec, models[k], result.perms[k]);
      }
    }
    if (!changed) {
      result.converged = true;
      break;
    }
  }
  return result;
}

namespace {

// The squared norm of the sum of the aligned models over the permuted parameters.
double agreement(const PermSpec& spec, const std::vector<Weights>& models,
                 const std::vector<std::vector<Perm>>& perms) {
  double total = 0;
  std::vector<Weights> aligned;
  for (std::size_t k = 0; k < models.size(); ++k) aligned.push_back(permute_weights(spec, models[k], perms[k]));
  for (std::size_t t = 0; t < spec.tensors.size(); ++t)
    for (std::size_t e = 0; e < aligned[0].tensors[t].size(); ++e) {
      double sum = 0;
      for (const Weights& w : aligned) sum += w.tensors[t][e];
      total += sum * sum;
    }
  return total;
}

}  // namespace

MergeManyResult align_models(const PermSpec& spec, const std::vector<Weights>& models, const MatchOptions& options) {
  WAVG_ASSERT(models.size() >= 2);
  MergeManyResult best;
  double best_score = -1;
  const std::size_t restarts = options.restarts > 0 ? options.restarts : models.size() == 2 ? 1 : 4;
  for (std::size_t r = 0; r < restarts; ++r) {
    MatchOptions o = options;
    if (r > 0) o.seed = hash_key(options.seed, 0x5eed, r);
    MergeManyResult result;
    if (models.size() == 2) {
      MatchResult m = weight_matching(spec, models[0], models[1], o);
      result.perms = {identity_perms(spec), std::move(m.perms)};
      result.iterations = m.iterations, result.converged = m.converged;
    } else {
      result = merge_many(spec, models, o);
    }
    const double score = agreement(spec, models, result.perms);
    if (score > best_score) best_score = score, best = std::move(result);
  }
  return best;
}

}  // namespace wavg::align
