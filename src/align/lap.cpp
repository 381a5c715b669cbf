// The linear assignment problem by Jonker and Volgenant ("A shortest augmenting path algorithm for dense and sparse
// linear assignment problems", Computing 38, 1987): column reduction, reduction transfer and two rounds of
// augmenting row reduction find most of the assignment cheaply, then a Dijkstra-like shortest augmenting path
// assigns each row left free. Hand-written because Debian packages no well-kept C++ assignment solver for real
// costs: dlib's max_cost_assignment takes integer costs only, and weight matching's scores are inner products of
// weights. Solving a 4096 x 4096 problem takes well under a second (tests/align/test_lap.cpp, README).
//
// Floating point: the augmenting row reduction can, on ties, hand the same rows back and forth with tiny price
// changes; its steps are capped (it only ever speeds things up, the shortest-path phase alone is complete), and
// every comparison is against prices the loop itself computed, so the search terminates for any finite input.

#include "align/lap.hpp"

#include <limits>

#include "wavg/error.hpp"

namespace wavg::align {

namespace {

constexpr double k_inf = std::numeric_limits<double>::infinity();

class Solver {
 public:
  Solver(const std::vector<double>& score, std::size_t n)
      : m_n(n), m_cost(score.size()), m_x(n, -1), m_y(n, -1), m_v(n, 0) {
    for (std::size_t i = 0; i < score.size(); ++i) m_cost[i] = -score[i];  // maximise the score
  }

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
        if (strict) todo[--k] = i0;
        else still_free.push_back(i0);
      }
    }
    return still_free;
  }

  // Finds the shortest augmenting path from `start` over the reduced costs and flips it.
  void augment(std::size_t start) {
    std::vector<double> d(m_n);
    std::vector<std::size_t> pred(m_n, start), cols(m_n);
    for (std::size_t j = 0; j < m_n; ++j) {
      d[j] = c(start, j) - m_v[j];
      cols[j] = j;
    }
    // cols[0, low) are done, cols[low, up) are at the current minimum distance, cols[up, n) are still to scan.
    std::size_t low = 0, up = 0, last = 0, end = m_n;
    double min = 0;
    while (end == m_n) {
      if (up == low) {
        last = low;
        min = d[cols[up++]];
        for (std::size_t k = up; k < m_n; ++k) {
          const std::size_t j = cols[k];
          if (d[j] <= min) {
            if (d[j] < min) up = low, min = d[j];
            cols[k] = cols[up];
            cols[up++] = j;
          }
        }
        for (std::size_t k = low; k < up; ++k)
          if (m_y[cols[k]] < 0) {
            end = cols[k];
            break;
          }
      }
      if (end != m_n) break;
      const std::size_t j1 = cols[low++];
      const auto i = static_cast<std::size_t>(m_y[j1]);
      const double h = c(i, j1) - m_v[j1] - min;
      for (std::size_t k = up; k < m_n; ++k) {
        const std::size_t j = cols[k];
        const double v2 = c(i, j) - m_v[j] - h;
        if (v2 < d[j]) {
          pred[j] = i;
          if (v2 == min) {
            if (m_y[j] < 0) {
              end = j;
              break;
            }
            cols[k] = cols[up];
            cols[up++] = j;
          }
          d[j] = v2;
        }
      }
    }
    // Columns finished before this path was found get their prices raised, keeping every reduced cost >= 0.
    for (std::size_t k = 0; k < last; ++k) m_v[cols[k]] += d[cols[k]] - min;
    for (std::size_t i = 0;;) {
      i = pred[end];
      m_y[end] = static_cast<std::int64_t>(i);
      const std::int64_t next = m_x[i];
      m_x[i] = static_cast<std::int64_t>(end);
      if (i == start) break;
      end = static_cast<std::size_t>(next);
    }
  }

  std::size_t m_n;
  std::vector<double> m_cost;
  std::vector<std::int64_t> m_x, m_y;  // row -> column, column -> row; -1 when unassigned
  std::vector<double> m_v;             // column prices
};

}  // namespace

std::vector<std::uint32_t> solve_lap_max(const std::vector<double>& score, std::size_t n) {
  WAVG_ASSERT(score.size() == n * n);
  if (n == 0) return {};
  return Solver(score, n).solve();
}

}  // namespace wavg::align
