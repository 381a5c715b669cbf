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
// 4096-wide MLPs). Each group keeps the sum of its terms between visits (one n x n float matrix); a term whose
// other axes' permutations changed since is brought up to date by adding the product of A with the change of the
// permuted B, only over the rows that moved when few did.
//
// MergeMany aligns each of N models in turn to the mean of the others (themselves permuted as found so far), until
// a round over all models changes no permutation.

#include <Eigen/Core>

#include <cmath>

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
      : m_spec(spec), m_shapes(shapes), m_a(a), m_b(b), m_uses(spec.group_names.size()), m_cache(m_uses.size()) {
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
  // What a group's scores are kept as between its visits: their sum over the group's terms, in float (the
  // assignment rounds the scores to float anyway), and the permutations each term was last computed with. One n x n
  // float matrix per group, where a matrix per term (in double) held three times as many at double the size: 2.7
  // GiB of the 4 GiB the README's 134M benchmark took.
  struct Cache {
    std::vector<float> sum;               // row-major, as the products and the assignment take it
    std::vector<std::vector<Perm>> seen;  // per use of the group: every group's permutation at its last update
  };

  bool solve_group(std::size_t g, std::vector<Perm>& perms) {
    const std::uint64_t n = m_spec.group_sizes[g];
    Cache& cache = m_cache[g];
    if (cache.seen.empty()) {
      cache.sum.assign(n * n, 0.0f);
      for (const Use& u : m_uses[g]) add_term(u, perms, nullptr, cache.sum.data());
      cache.seen.assign(m_uses[g].size(), perms);
    } else {
      for (std::size_t k = 0; k < m_uses[g].size(); ++k)
        if (others_moved(m_uses[g][k], cache.seen[k], perms)) {
          add_term(m_uses[g][k], perms, &cache.seen[k], cache.sum.data());
          cache.seen[k] = perms;
        }
    }
    const std::vector<float>& flat = cache.sum;
    for (const float v : flat)
      if (!std::isfinite(v))
        throw Error(ExitCode::runtime, "",
                    "weight matching: group " + m_spec.group_names[g] + " has non-finite weights (NaN or infinity)");
    const Perm next = solve_lap_max(flat, n, &m_moved);  // idle until the next product
    double old_score = 0, new_score = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      old_score += flat[i * n + perms[g][i]];
      new_score += flat[i * n + next[i]];
    }
    if (!(new_score > old_score + 1e-12 * std::max(1.0, std::abs(old_score)))) return false;
    perms[g] = next;
    return true;
  }

  // Tells whether a permutation of another axis of u's tensor than u's own differs between `before` and `after`.
  bool others_moved(const Use& u, const std::vector<Perm>& before, const std::vector<Perm>& after) const {
    const TensorPerm& tp = m_spec.tensors[u.tensor];
    for (std::size_t ax = 0; ax < tp.axes.size(); ++ax) {
      const int group = tp.axes[ax].group;
      if (ax != u.axis && group >= 0 &&
          before[static_cast<std::size_t>(group)] != after[static_cast<std::size_t>(group)])
        return true;
    }
    return false;
  }

  // Adds to `sum` u's term under `perms`: A unfolded along u.axis times B (other axes permuted) unfolded along it,
  // transposed; with `before`, less the term under those permutations, as one product of A with the difference of
  // the two permuted B (a change of few units of a matrix's other axis: of the rows that moved only, |K| / m the
  // size, which is what makes later passes cheap).
  // Both tensors' mapped pages are released after it (Weights): the next term reads other tensors.
  void add_term(const Use& u, const std::vector<Perm>& perms, const std::vector<Perm>* before, float* sum) {
    add_term_values(u, perms, before, sum);
    m_a.release(u.tensor);
    m_b.release(u.tensor);
  }

  void add_term_values(const Use& u, const std::vector<Perm>& perms, const std::vector<Perm>* before, float* sum) {
    if (before && add_moved_rows(u, *before, perms, sum)) return;
    const TensorPerm& tp = m_spec.tensors[u.tensor];
    const Shape& shape = m_shapes[u.tensor];
    const float* a = m_a.data(u.tensor);
    const float* b = m_b.data(u.tensor);
    const std::uint64_t size = m_b.count(u.tensor);
    const float* bp = nullptr;
    if (!before) {
      bp = permuted_b(u, perms, b, m_moved);
    } else if (matrix_change(u, *before, perms, m_moved)) {
      bp = m_moved.data();
    } else {
      bp = permuted_b(u, perms, b, m_moved);
      const float* old = permuted_b(u, *before, b, m_moved_before);
      if (bp != m_moved.data()) m_moved.assign(b, b + size);
      for (std::size_t e = 0; e < size; ++e) m_moved[e] -= old[e];
      bp = m_moved.data();
    }
    const auto n = m_spec.group_sizes[static_cast<std::size_t>(tp.axes[u.axis].group)];
    std::uint64_t pre = tp.axes[u.axis].outer, post = tp.axes[u.axis].inner;
    for (std::size_t ax = 0; ax < u.axis; ++ax) pre *= shape[ax];
    for (std::size_t ax = u.axis + 1; ax < shape.size(); ++ax) post *= shape[ax];
    add_score_product(a, bp, pre, n, post, sum, threads_for(pre, n, post));
  }

  // Returns B's tensor of u with its other axes permuted by `perms`: b itself when none moves, else `into`.
  const float* permuted_b(const Use& u, const std::vector<Perm>& perms, const float* b,
                          std::vector<float>& into) const {
    const std::vector<IndexMap> maps = tensor_maps(m_spec.tensors[u.tensor], m_shapes[u.tensor], perms, u.axis);
    bool any = false;
    for (const IndexMap& m : maps) any |= !m.empty();
    if (!any) return b;
    into.resize(m_b.count(u.tensor));
    permute_bytes(reinterpret_cast<const unsigned char*>(b), reinterpret_cast<unsigned char*>(into.data()),
                  m_shapes[u.tensor], sizeof(float), maps);
    return into.data();
  }

  // Points `before` and `after` at the permutations of the other axis of u's tensor when it is a matrix whose other
  // axis is one whole group (the Dense and linear kernels); false for any other tensor.
  bool other_axis_perms(const Use& u, const std::vector<Perm>& before_all, const std::vector<Perm>& after_all,
                        const Perm*& before, const Perm*& after) const {
    const TensorPerm& tp = m_spec.tensors[u.tensor];
    if (m_shapes[u.tensor].size() != 2) return false;
    const AxisPerm& other = tp.axes[1 - u.axis];
    if (other.group < 0 || other.outer != 1 || other.inner != 1) return false;
    before = &before_all[static_cast<std::size_t>(other.group)];
    after = &after_all[static_cast<std::size_t>(other.group)];
    return true;
  }

  // Sets `into` to a matrix's B permuted by `after` less B permuted by `before` along its other axis, in one pass
  // and one buffer (the same differences as of the two permuted copies); false for any other tensor.
  bool matrix_change(const Use& u, const std::vector<Perm>& before_all, const std::vector<Perm>& after_all,
                     std::vector<float>& into) {
    const Perm* before = nullptr;
    const Perm* after = nullptr;
    if (!other_axis_perms(u, before_all, after_all, before, after)) return false;
    const float* b = m_b.data(u.tensor);
    const std::uint64_t rows = m_shapes[u.tensor][0], cols = m_shapes[u.tensor][1];
    into.resize(rows * cols);
    for (std::uint64_t r = 0; r < rows; ++r) {
      float* d = into.data() + r * cols;
      if (u.axis == 1) {  // the rows are the other axis
        const float* now = b + std::uint64_t{(*after)[r]} * cols;
        const float* was = b + std::uint64_t{(*before)[r]} * cols;
        for (std::uint64_t c = 0; c < cols; ++c) d[c] = now[c] - was[c];
      } else {
        const float* row = b + r * cols;
        for (std::uint64_t c = 0; c < cols; ++c) d[c] = row[(*after)[c]] - row[(*before)[c]];
      }
    }
    return true;
  }

  // The change of a matrix's term when the permutation of its other axis moved few units: only the rows (or
  // columns) of B that moved contribute, T += A_K^T (B_new(K) - B_old(K)). Returns false when it does not pay.
  bool add_moved_rows(const Use& u, const std::vector<Perm>& before_all, const std::vector<Perm>& after_all,
                      float* sum) {
    const Perm* before_p = nullptr;
    const Perm* after_p = nullptr;
    if (!other_axis_perms(u, before_all, after_all, before_p, after_p)) return false;
    const Perm &before = *before_p, &after = *after_p;
    const Shape& shape = m_shapes[u.tensor];
    std::vector<Eigen::Index> changed;
    for (std::size_t k = 0; k < after.size(); ++k)
      if (before[k] != after[k]) changed.push_back(static_cast<Eigen::Index>(k));
    if (changed.size() * 2 > after.size()) return false;
    const auto rows = static_cast<Eigen::Index>(shape[0]), cols = static_cast<Eigen::Index>(shape[1]);
    const Eigen::Map<const MatrixF> a(m_a.data(u.tensor), rows, cols);
    const Eigen::Map<const MatrixF> b(m_b.data(u.tensor), rows, cols);
    const auto k = static_cast<Eigen::Index>(changed.size());
    const auto uk = static_cast<std::uint64_t>(k);
    // ak and d take at most half of the tensor each (changed.size() * 2 <= after.size()): m_moved holds both.
    m_moved.resize(std::max<std::size_t>(m_moved.size(), m_b.count(u.tensor)));
    if (u.axis == 1) {  // T[i][j] = sum_r A[r][i] B[perm(r)][j]: rows r of the other axis moved
      Eigen::Map<MatrixF> ak(m_moved.data(), k, cols), d(m_moved.data() + k * cols, k, cols);
      for (Eigen::Index r = 0; r < k; ++r) {
        const auto row = static_cast<std::size_t>(changed[static_cast<std::size_t>(r)]);
        ak.row(r) = a.row(static_cast<Eigen::Index>(row));
        d.row(r) = b.row(after[row]) - b.row(before[row]);
      }
      const auto n = static_cast<std::uint64_t>(cols);
      add_score_product(ak.data(), d.data(), uk, n, 1, sum, threads_for(uk, n, 1));
    } else {  // T[i][j] = sum_c A[i][c] B[j][perm(c)]: columns c moved
      Eigen::Map<MatrixF> ak(m_moved.data(), rows, k), d(m_moved.data() + rows * k, rows, k);
      for (Eigen::Index c = 0; c < k; ++c) {
        const auto col = static_cast<std::size_t>(changed[static_cast<std::size_t>(c)]);
        ak.col(c) = a.col(static_cast<Eigen::Index>(col));
        d.col(c) = b.col(after[col]) - b.col(before[col]);
      }
      const auto n = static_cast<std::uint64_t>(rows);
      add_score_product(ak.data(), d.data(), 1, n, uk, sum, threads_for(1, n, uk));
    }
    return true;
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
  std::vector<Cache> m_cache;  // per group
  // Scratch kept between groups and passes: buffers of hundreds of MB, allocated afresh each time, cost more in
  // page faults (system time) than filling them does (134M benchmark: 12 s of system CPU).
  std::vector<float> m_moved;         // B's tensor with its other axes permuted
  std::vector<float> m_moved_before;  // the same under the permutations its cached term was computed with
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
      Weights mean;  // the shapes of models[k], the values the mean of the others
      mean.shapes = models[k].shapes;
      mean.tensors.resize(mean.shapes.size());
      for (std::size_t t = 0; t < mean.tensors.size(); ++t) {
        if (!models[k].holds(t)) continue;
        std::vector<float>& m = mean.tensors[t];
        m.resize(models[k].count(t));
        std::vector<const float*> others;
        for (std::size_t l = 0; l < k_models; ++l)
          if (l != k) others.push_back(aligned[l].data(t));
        for (std::size_t e = 0; e < m.size(); ++e) {
          double sum = 0;
          for (const float* o : others) sum += o[e];
          m[e] = static_cast<float>(sum / static_cast<double>(k_models - 1));
        }
        for (const Weights& w : aligned) w.release(t);
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

// The squared norm of the sum of the aligned models over the permuted parameters, one tensor at a time (permuting
// whole models would hold a copy of every one of them).
double agreement(const PermSpec& spec, const std::vector<Weights>& models,
                 const std::vector<std::vector<Perm>>& perms) {
  double total = 0;
  std::vector<float> moved;
  std::vector<double> sum;
  for (std::size_t t = 0; t < spec.tensors.size(); ++t) {
    if (!models[0].holds(t)) continue;
    sum.assign(models[0].count(t), 0.0);
    for (std::size_t k = 0; k < models.size(); ++k) {
      const Shape& shape = models[k].shapes[t];
      const float* values = models[k].data(t);
      if (spec.tensors[t].permuted()) {
        moved.resize(sum.size());
        permute_bytes(reinterpret_cast<const unsigned char*>(values), reinterpret_cast<unsigned char*>(moved.data()),
                      shape, sizeof(float), tensor_maps(spec.tensors[t], shape, perms[k], shape.size()));
        values = moved.data();
      }
      for (std::size_t e = 0; e < sum.size(); ++e) sum[e] += values[e];
      models[k].release(t);
    }
    for (const double v : sum) total += v * v;
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
    // One search needs no comparing (and the agreement reads every model once more).
    const double score = restarts > 1 ? agreement(spec, models, result.perms) : 0;
    if (score > best_score) best_score = score, best = std::move(result);
  }
  return best;
}

}  // namespace wavg::align
