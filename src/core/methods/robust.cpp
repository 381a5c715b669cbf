// Robust aggregation: the decisions that need whole-model statistics. Krum and the geometric median both work
// from the matrix of squared distances between the (clipped) updates, which one streaming pass collects
// (Backend::update_sq_distances). Krum picks inputs from it directly. Weiszfeld's algorithm looks like it needs a
// pass over the model per iteration, but every iterate z = sum_j c_j y_j is an affine combination of the inputs
// (the coefficients sum to 1), and for such a point
//
//     ||y_k - z||^2 = sum_j c_j D_kj - 1/2 sum_j sum_l c_j c_l D_jl        (D_jl = ||y_j - y_l||^2)
//
// so every iteration runs on N coefficients and the N x N matrix, and the final combine is one weighted sum. The
// price is O(N^2) work per element in the distance pass, instead of O(N) per element per iteration.

#include <algorithm>
#include <cmath>

#include "wavg/error.hpp"
#include "wavg/federated.hpp"

namespace wavg {

std::uint32_t trim_count(double trim, std::size_t n) {
  return static_cast<std::uint32_t>(std::floor(trim * static_cast<double>(n) + 1e-9));
}

std::vector<double> krum_scores(const std::vector<double>& dist, std::size_t n, std::size_t f) {
  WAVG_ASSERT(dist.size() == n * n && n >= f + 3);
  const std::size_t neighbours = n - f - 2;
  std::vector<double> scores(n), row;
  for (std::size_t k = 0; k < n; ++k) {
    row.clear();
    for (std::size_t j = 0; j < n; ++j)
      if (j != k) row.push_back(dist[k * n + j]);
    std::sort(row.begin(), row.end());
    double s = 0;
    for (std::size_t j = 0; j < neighbours; ++j) s += row[j];
    scores[k] = s;
  }
  return scores;
}

std::vector<std::size_t> lowest_scores(const std::vector<double>& scores, std::size_t m) {
  std::vector<std::size_t> order(scores.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  order.resize(std::min(m, order.size()));
  std::sort(order.begin(), order.end());
  return order;
}

namespace {

// Returns ||y_k - z|| for every k, for z = sum_j c_j y_j.
std::vector<double> distances_to(const std::vector<double>& dist, const std::vector<double>& c) {
  const std::size_t n = c.size();
  double cdc = 0;
  std::vector<double> dc(n, 0.0);
  for (std::size_t k = 0; k < n; ++k) {
    for (std::size_t j = 0; j < n; ++j) dc[k] += c[j] * dist[k * n + j];
    cdc += c[k] * dc[k];
  }
  std::vector<double> out(n);
  for (std::size_t k = 0; k < n; ++k) out[k] = std::sqrt(std::max(0.0, dc[k] - cdc / 2));  // rounding can go < 0
  return out;
}

double objective(const std::vector<double>& d, const std::vector<double>& weights) {
  double s = 0;
  for (std::size_t k = 0; k < d.size(); ++k) s += weights[k] * d[k];
  return s;
}

}  // namespace

WeiszfeldResult weiszfeld(const std::vector<double>& dist, const std::vector<double>& weights, double tol, int max_iter,
                          double eps) {
  const std::size_t n = weights.size();
  WAVG_ASSERT(dist.size() == n * n && n > 0);
  double total = 0;
  for (double w : weights) total += w;
  WeiszfeldResult r;
  r.coeffs.resize(n);
  for (std::size_t k = 0; k < n; ++k) r.coeffs[k] = weights[k] / total;  // start from the weighted mean
  std::vector<double> d = distances_to(dist, r.coeffs);
  double obj = objective(d, weights);
  if (obj == 0) {
    r.converged = true;
    return r;
  }
  std::vector<double> next(n);
  while (r.iterations < max_iter) {
    double sum = 0;
    for (std::size_t k = 0; k < n; ++k) sum += next[k] = weights[k] / std::max(d[k], eps);
    for (std::size_t k = 0; k < n; ++k) next[k] /= sum;
    ++r.iterations;
    const std::vector<double> nd = distances_to(dist, next);
    const double nobj = objective(nd, weights);
    r.coeffs = next;
    d = nd;
    // Weiszfeld never increases the objective (up to rounding); stop once it no longer decreases by `tol`.
    if (obj - nobj <= tol * nobj) {
      r.converged = true;
      break;
    }
    obj = nobj;
  }
  return r;
}

}  // namespace wavg
