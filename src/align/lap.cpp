// The linear assignment problem by Jonker and Volgenant ("A shortest augmenting path algorithm for dense and sparse
// linear assignment problems", Computing 38, 1987): column reduction, reduction transfer and two rounds of
// augmenting row reduction find most of the assignment cheaply, then a Dijkstra-like shortest augmenting path
// assigns each row left free. Hand-written because Debian packages no well-kept C++ assignment solver for real
// costs: dlib's max_cost_assignment takes integer costs only, and weight matching's scores are inner products of
// weights. Solving a 4096 x 4096 problem takes well under a second (tests/bench/lap_bench.cpp, README).
//
// Where the time goes: the shortest-path phase reaches, for each row left free, hundreds to thousands of rows of the
// cost matrix, each read whole from memory. So the costs are kept as floats (half the bytes; the scores are scaled
// by a power of two first, so nothing overflows and the rounding is relative to the largest score), and each row
// reached is scanned in one branch-free pass in memory order (augment() says how; SSE2, or AVX2 where the CPU has
// it), not through a list of the columns still open as the textbook loop does. On i.i.d. Gaussian scores, n = 4096,
// that took the solve from 0.95 to 0.48 s of CPU on the loaded 2-core machine (0.65 with SSE2 only); the float
// rounding can only matter between assignments whose totals differ by about 1e-7 of the largest score.
//
// Floating point: the augmenting row reduction can, on ties, hand the same rows back and forth with tiny price
// changes; its steps are capped (it only ever speeds things up, the shortest-path phase alone is complete), and
// every comparison is against prices the loop itself computed, so the search terminates for any finite input.

#include "align/lap.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#ifdef __SSE2__
#include <immintrin.h>
#endif

#include "wavg/error.hpp"

namespace wavg::align {

namespace {

constexpr double k_inf = std::numeric_limits<double>::infinity();

// Ends a relaxation pass: picks the nearest column from the vector lanes' minima (`lanes` of them, with their
// columns as doubles, -1 where a lane saw only +infinity), then relaxes columns j..n-1 one by one.
double finish_relax(const double* mins, const double* index, int lanes, const float* row, const double* vv, double* d,
                    std::size_t j, std::size_t n, double h, std::size_t& at) {
  double best = std::numeric_limits<double>::infinity();
  for (int lane = 0; lane < lanes; ++lane)
    if (index[lane] >= 0 && (mins[lane] < best || (mins[lane] == best && index[lane] < static_cast<double>(at))))
      best = mins[lane], at = static_cast<std::size_t>(index[lane]);
  for (; j < n; ++j) {
    const double t = static_cast<double>(row[j]) - vv[j] - h;
    if (t < d[j]) d[j] = t;
    if (d[j] < best) best = d[j], at = j;
  }
  return best;
}

#if defined(__x86_64__) && defined(__GNUC__)
// Solver::relax with AVX2, eight columns a step (the same operations, so the same results, as the SSE2 loop).
#define WAVG_LAP_AVX2 1
__attribute__((target("avx2"))) double relax_avx2(const float* row, const double* vv, double* d, std::size_t n,
                                                  double h, std::size_t& at) {
  std::size_t j = 0;
  __m256d m0 = _mm256_set1_pd(std::numeric_limits<double>::infinity()), m1 = m0, i0 = _mm256_set1_pd(-1), i1 = i0;
  __m256d j0 = _mm256_set_pd(3, 2, 1, 0), j1 = _mm256_set_pd(7, 6, 5, 4);
  const __m256d hh = _mm256_set1_pd(h), eight = _mm256_set1_pd(8);
  for (; j + 8 <= n; j += 8) {
    const __m256d r0 = _mm256_cvtps_pd(_mm_loadu_ps(row + j)), r1 = _mm256_cvtps_pd(_mm_loadu_ps(row + j + 4));
    const __m256d t0 = _mm256_sub_pd(_mm256_sub_pd(r0, _mm256_loadu_pd(vv + j)), hh);
    const __m256d t1 = _mm256_sub_pd(_mm256_sub_pd(r1, _mm256_loadu_pd(vv + j + 4)), hh);
    const __m256d d0 = _mm256_min_pd(t0, _mm256_loadu_pd(d + j));
    const __m256d d1 = _mm256_min_pd(t1, _mm256_loadu_pd(d + j + 4));
    _mm256_storeu_pd(d + j, d0);
    _mm256_storeu_pd(d + j + 4, d1);
    const __m256d lt0 = _mm256_cmp_pd(d0, m0, _CMP_LT_OQ), lt1 = _mm256_cmp_pd(d1, m1, _CMP_LT_OQ);
    m0 = _mm256_min_pd(d0, m0);
    m1 = _mm256_min_pd(d1, m1);
    i0 = _mm256_blendv_pd(i0, j0, lt0);
    i1 = _mm256_blendv_pd(i1, j1, lt1);
    j0 = _mm256_add_pd(j0, eight);
    j1 = _mm256_add_pd(j1, eight);
  }
  alignas(32) double mins[8], index[8];
  _mm256_store_pd(mins, m0);
  _mm256_store_pd(mins + 4, m1);
  _mm256_store_pd(index, i0);
  _mm256_store_pd(index + 4, i1);
  return finish_relax(mins, index, 8, row, vv, d, j, n, h, at);
}
#endif

class Solver {
 public:
  // `storage`: memory for the costs, when the caller has a buffer to lend (take_storage gives it back).
  template <class T>
  Solver(const std::vector<T>& score, std::size_t n, std::vector<float> storage = {})
      : m_d(n), m_vv(n), m_n(n), m_cost(std::move(storage)), m_x(n, -1), m_y(n, -1), m_v(n, 0) {
    m_cost.resize(score.size());
    double largest = 0;
    for (const T s : score) largest = std::max(largest, static_cast<double>(std::abs(s)));
    int exponent = 0;
    if (largest > 0) std::frexp(largest, &exponent);
    const double scale = std::ldexp(1.0, -exponent);  // exact: the largest score becomes at most 1 in magnitude
    for (std::size_t i = 0; i < score.size(); ++i)
      m_cost[i] = static_cast<float>(-static_cast<double>(score[i]) * scale);  // maximise the score
  }

  std::vector<float> take_storage() { return std::move(m_cost); }

  std::vector<std::uint32_t> solve() {
    std::vector<std::int64_t> free = reduce();
    for (int round = 0; round < 2 && !free.empty(); ++round) free = augmenting_row_reduction(free);
    for (std::int64_t row : free) augment(static_cast<std::size_t>(row));
    std::vector<std::uint32_t> out(m_n);
    for (std::size_t i = 0; i < m_n; ++i) {
      WAVG_ASSERT(m_x[i] >= 0);
      out[i] = static_cast<std::uint32_t>(m_x[i]);
    }
    return out;
  }

 private:
  double c(std::size_t i, std::size_t j) const { return m_cost[i * m_n + j]; }

  // Column reduction and reduction transfer; returns the rows left free.
  std::vector<std::int64_t> reduce() {
    std::vector<int> matches(m_n, 0);
    // Every column's minimum and its first row, found in one pass over the rows (row-major, so in memory order).
    std::vector<double> col_min(m_cost.begin(), m_cost.begin() + static_cast<std::ptrdiff_t>(m_n));
    std::vector<std::size_t> col_arg(m_n, 0);
    for (std::size_t i = 1; i < m_n; ++i)
      for (std::size_t j = 0; j < m_n; ++j)
        if (c(i, j) < col_min[j]) col_min[j] = c(i, j), col_arg[j] = i;
    for (std::size_t jj = m_n; jj-- > 0;) {
      const std::size_t imin = col_arg[jj];
      const double min = col_min[jj];
      m_v[jj] = min;
      if (++matches[imin] == 1) {
        m_x[imin] = static_cast<std::int64_t>(jj);
        m_y[jj] = static_cast<std::int64_t>(imin);
      } else if (m_v[jj] < m_v[static_cast<std::size_t>(m_x[imin])]) {
        const auto j1 = static_cast<std::size_t>(m_x[imin]);
        m_x[imin] = static_cast<std::int64_t>(jj);
        m_y[jj] = static_cast<std::int64_t>(imin);
        m_y[j1] = -1;
      } else {
        m_y[jj] = -1;
      }
    }
    std::vector<std::int64_t> free;
    for (std::size_t i = 0; i < m_n; ++i) {
      if (matches[i] == 0) {
        free.push_back(static_cast<std::int64_t>(i));
      } else if (matches[i] == 1) {
        const auto j1 = static_cast<std::size_t>(m_x[i]);
        double min = k_inf;
        for (std::size_t j = 0; j < m_n; ++j)
          if (j != j1 && c(i, j) - m_v[j] < min) min = c(i, j) - m_v[j];
        if (min < k_inf) m_v[j1] -= min;
      }
    }
    return free;
  }

  std::vector<std::int64_t> augmenting_row_reduction(std::vector<std::int64_t> todo) {
    std::vector<std::int64_t> still_free;
    std::size_t k = 0, steps = 0;
    const std::size_t max_steps = 4 * m_n + 16;
    while (k < todo.size()) {
      const auto i = static_cast<std::size_t>(todo[k++]);
      if (++steps > max_steps) {  // see the file's comment: leave the rest to the shortest-path phase
        still_free.push_back(static_cast<std::int64_t>(i));
        continue;
      }
      double umin = c(i, 0) - m_v[0], usubmin = k_inf;
      std::size_t j1 = 0, j2 = 0;
      for (std::size_t j = 1; j < m_n; ++j) {
        const double h = c(i, j) - m_v[j];
        if (h < usubmin) {
          if (h >= umin) {
            usubmin = h, j2 = j;
          } else {
            usubmin = umin, umin = h, j2 = j1, j1 = j;
          }
        }
      }
      std::int64_t i0 = m_y[j1];
      const bool strict = umin < usubmin && usubmin < k_inf;
      if (strict) {
        m_v[j1] -= usubmin - umin;
      } else if (i0 >= 0 && m_n > 1) {
        j1 = j2;
        i0 = m_y[j2];
      }
      m_x[i] = static_cast<std::int64_t>(j1);
      m_y[j1] = static_cast<std::int64_t>(i);
      if (i0 >= 0) {
        m_x[static_cast<std::size_t>(i0)] = -1;
        if (strict)
          todo[--k] = i0;
        else
          still_free.push_back(i0);
      }
    }
    return still_free;
  }

  // Finds the shortest augmenting path from `start` over the reduced costs and flips it (Dijkstra over the
  // columns). Each step relaxes every column from the row just reached in one pass over the whole row, in memory
  // order and without branches, and finds the next nearest column in the same pass: columns already reached are
  // hidden by a price of -infinity in `m_vv` (their tentative cost becomes +infinity). Which row reached a column
  // is not recorded in that pass (that would cost a store per column); it is found again for the columns on the
  // path only, as the row scanned before the column was reached whose cost to it equals its distance (the same
  // expression, so the same rounding: an exact match exists).
  void augment(std::size_t start) {
    std::vector<double>& d = m_d;
    std::vector<double>& vv = m_vv;
    vv = m_v;
    m_rows.clear();
    m_reached.clear();
    double h = 0;  // the scanned row's offset: its reduced cost to the column it was reached through, minus that
                   // column's distance (0 for the start row)
    std::size_t i = start;
    for (std::size_t j = 0; j < m_n; ++j) d[j] = k_inf;
    std::size_t end = m_n;
    double min = 0;
    for (;;) {
      m_rows.push_back({i, h});
      std::size_t next = m_n;
      min = relax(&m_cost[i * m_n], h, next);
      WAVG_ASSERT(next < m_n);
      if (m_y[next] < 0) {  // another column as near may be free too; Dijkstra may take either
        end = next;
        break;
      }
      m_reached.push_back({next, min});
      vv[next] = -k_inf;
      d[next] = k_inf;
      i = static_cast<std::size_t>(m_y[next]);
      h = c(i, next) - m_v[next] - min;
    }
    // Flip the path from `end` back to `start`: each column's predecessor is a row scanned before it was reached.
    std::size_t rows = m_rows.size();
    double dist = min;
    for (std::size_t col = end;;) {
      std::size_t r = 0;
      while (r < rows && !(c(m_rows[r].row, col) - m_v[col] - m_rows[r].h == dist)) ++r;
      WAVG_ASSERT(r < rows);
      const std::size_t row = m_rows[r].row;
      const std::int64_t prev = m_x[row];
      m_y[col] = static_cast<std::int64_t>(row);
      m_x[row] = static_cast<std::int64_t>(col);
      if (row == start) break;
      // The row's old column was reached as the (r-1)-th column; rows scanned before it are the first r.
      WAVG_ASSERT(r >= 1 && m_reached[r - 1].col == static_cast<std::size_t>(prev));
      col = static_cast<std::size_t>(prev);
      dist = m_reached[r - 1].d;
      rows = r;
    }
    // Columns reached before the end get their prices raised, keeping every reduced cost >= 0.
    for (const Reached& r : m_reached) m_v[r.col] += r.d - min;
  }

  // d[j] = min(d[j], row[j] - vv[j] - h) for every column; returns the smallest d[j] and sets `at` to the first
  // column holding it (columns reached hold +infinity, so one is open whenever any d is finite).
  double relax(const float* row, double h, std::size_t& at) {
    double* d = m_d.data();
    const double* vv = m_vv.data();
#ifdef WAVG_LAP_AVX2
    static const bool avx2 = __builtin_cpu_supports("avx2");
    if (avx2) return relax_avx2(row, vv, d, m_n, h, at);
#endif
    std::size_t j = 0;
#ifdef __SSE2__
    // Four lanes, each keeping its smallest d and that column's index (as a double: exact below 2^53), so the
    // search needs no second pass.
    __m128d m0 = _mm_set1_pd(k_inf), m1 = m0, i0 = _mm_set1_pd(-1), i1 = i0;
    __m128d j0 = _mm_set_pd(1, 0), j1 = _mm_set_pd(3, 2);
    const __m128d hh = _mm_set1_pd(h), four = _mm_set1_pd(4);
    for (; j + 4 <= m_n; j += 4) {
      const __m128 r = _mm_loadu_ps(row + j);
      const __m128d t0 = _mm_sub_pd(_mm_sub_pd(_mm_cvtps_pd(r), _mm_loadu_pd(vv + j)), hh);
      const __m128d t1 = _mm_sub_pd(_mm_sub_pd(_mm_cvtps_pd(_mm_movehl_ps(r, r)), _mm_loadu_pd(vv + j + 2)), hh);
      const __m128d d0 = _mm_min_pd(t0, _mm_loadu_pd(d + j));  // min(a, b) is b unless a < b: NaN-free here
      const __m128d d1 = _mm_min_pd(t1, _mm_loadu_pd(d + j + 2));
      _mm_storeu_pd(d + j, d0);
      _mm_storeu_pd(d + j + 2, d1);
      const __m128d lt0 = _mm_cmplt_pd(d0, m0), lt1 = _mm_cmplt_pd(d1, m1);
      m0 = _mm_min_pd(d0, m0);
      m1 = _mm_min_pd(d1, m1);
      i0 = _mm_or_pd(_mm_and_pd(lt0, j0), _mm_andnot_pd(lt0, i0));
      i1 = _mm_or_pd(_mm_and_pd(lt1, j1), _mm_andnot_pd(lt1, i1));
      j0 = _mm_add_pd(j0, four);
      j1 = _mm_add_pd(j1, four);
    }
    alignas(16) double mins[4], index[4];
    _mm_store_pd(mins, m0);
    _mm_store_pd(mins + 2, m1);
    _mm_store_pd(index, i0);
    _mm_store_pd(index + 2, i1);
    return finish_relax(mins, index, 4, row, vv, d, j, m_n, h, at);
#else
    return finish_relax(nullptr, nullptr, 0, row, vv, d, j, m_n, h, at);
#endif
  }

  struct Scanned {
    std::size_t row;
    double h;
  };
  struct Reached {
    std::size_t col;
    double d;
  };
  std::vector<double> m_d, m_vv;
  std::vector<Scanned> m_rows;
  std::vector<Reached> m_reached;

  std::size_t m_n;
  std::vector<float> m_cost;           // rounded to float: the search reads it row by row from memory
  std::vector<std::int64_t> m_x, m_y;  // row -> column, column -> row; -1 when unassigned
  std::vector<double> m_v;             // column prices
};

}  // namespace

std::vector<std::uint32_t> solve_lap_max(const std::vector<double>& score, std::size_t n) {
  WAVG_ASSERT(score.size() == n * n);
  if (n == 0) return {};
  return Solver(score, n).solve();
}

std::vector<std::uint32_t> solve_lap_max(const std::vector<float>& score, std::size_t n, std::vector<float>* scratch) {
  WAVG_ASSERT(score.size() == n * n);
  if (n == 0) return {};
  if (!scratch) return Solver(score, n).solve();
  Solver solver(score, n, std::move(*scratch));
  std::vector<std::uint32_t> out = solver.solve();
  *scratch = solver.take_storage();
  return out;
}

}  // namespace wavg::align
