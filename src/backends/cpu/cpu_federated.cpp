// CPU kernels for the federated methods. Element-wise kernels split the elements statically over OpenMP threads.
// Reductions over elements (norms, the Gram matrix) are cut into chunks of a fixed number of elements, whatever
// the thread count; each chunk's partial sum is computed by one thread and the partials are then added in chunk
// order, so the result is bit-identical for 1 or 64 threads. Per-element work over inputs always runs in input
// order (or, for order statistics, in sorted order with ties broken by input index).

#include "backends/cpu/cpu_federated.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_elements.hpp"
#include "backends/cpu/order_network.hpp"
#include "wavg/element_math.hpp"
#include "wavg/philox.hpp"

namespace wavg::cpu {

namespace {

std::int64_t chunk_count(std::uint64_t count) { return static_cast<std::int64_t>(reduce_chunks(count)); }

}  // namespace

void update_sum_squares(const BlockInputs& in, double* sums) {
  const std::size_t n = in.data.size();
  const std::int64_t chunks = chunk_count(in.count);
  std::vector<double> partial(static_cast<std::size_t>(chunks) * n, 0.0);
  dispatch_float(in.dtype, [&]<DType T>() {
    const Updates<T> u{in.data.data(), in.base, static_cast<std::uint32_t>(n)};
#pragma omp parallel for schedule(static) if (in.count >= k_parallel_threshold)
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::uint64_t begin = static_cast<std::uint64_t>(c) * k_reduce_chunk;
      const std::uint64_t end = std::min(in.count, begin + k_reduce_chunk);
      for (std::uint32_t k = 0; k < n; ++k)
        partial[static_cast<std::size_t>(c) * n + k] = sum_squares_chunk(u, k, begin, end);
    }
  });
  for (std::int64_t c = 0; c < chunks; ++c)
    for (std::size_t k = 0; k < n; ++k) sums[k] += partial[static_cast<std::size_t>(c) * n + k];
}

namespace {

// sq_distance_chunk for every pair j < l of one reduction chunk at once, each update read once: the N updates of
// k_sum_lanes elements are loaded side by side, and every pair keeps a vector of lane sums (`acc`, pairs x
// lanes), so the additions of one element run in parallel instead of one dependent chain per pair.
template <DType T>
WAVG_CLONES void sq_distance_lanes(const void* const* data, const void* base, const double* scales, std::size_t n,
                                   std::uint64_t begin, std::uint64_t end, double* __restrict y,
                                   double* __restrict acc) {
  constexpr std::uint32_t lanes = k_sum_lanes;
  const std::size_t pairs = n * (n - 1) / 2;
  std::fill(acc, acc + pairs * lanes, 0.0);
  for (std::uint64_t i = begin; i < end; i += lanes) {
    const std::uint64_t m = std::min<std::uint64_t>(lanes, end - i);
    if (m == lanes)
      for (std::size_t k = 0; k < n; ++k)
        for (std::uint32_t e = 0; e < lanes; ++e) y[k * lanes + e] = scales[k] * update_at<T>(data[k], base, i + e);
    else
      for (std::size_t k = 0; k < n; ++k)
        for (std::uint32_t e = 0; e < lanes; ++e)
          y[k * lanes + e] = e < m ? scales[k] * update_at<T>(data[k], base, i + e) : 0;
    double* a = acc;
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t l = j + 1; l < n; ++l, a += lanes)
        for (std::uint32_t e = 0; e < lanes; ++e) a[e] += sq_distance_term(y[j * lanes + e], y[l * lanes + e]);
  }
}

}  // namespace

void update_sq_distances(const BlockInputs& in, const double* scales, double* dist) {
  const std::size_t n = in.data.size();
  const std::int64_t chunks = chunk_count(in.count);
  std::vector<double> partial(static_cast<std::size_t>(chunks) * n * n, 0.0);
  dispatch_float(in.dtype, [&]<DType T>() {
    const void* const* data = in.data.data();
#pragma omp parallel if (in.count >= k_parallel_threshold)
    {
      // Per thread, outside the element loop. A padded tail lane adds (0 - 0)^2 = 0 to a sum that is >= 0, which
      // leaves it as it is (+0 included), so every lane holds the same bits as sq_distance_chunk's.
      std::vector<double> y(n * k_sum_lanes), acc(n * (n - 1) / 2 * k_sum_lanes);
#pragma omp for schedule(static)
      for (std::int64_t c = 0; c < chunks; ++c) {
        double* d = partial.data() + static_cast<std::size_t>(c) * n * n;
        const std::uint64_t begin = static_cast<std::uint64_t>(c) * k_reduce_chunk;
        const std::uint64_t end = std::min(in.count, begin + k_reduce_chunk);
        sq_distance_lanes<T>(data, in.base, scales, n, begin, end, y.data(), acc.data());
        const double* a = acc.data();
        for (std::size_t j = 0; j < n; ++j)
          for (std::size_t l = j + 1; l < n; ++l, a += k_sum_lanes) d[j * n + l] = sum_lanes_total(a);
      }
    }
  });
  for (std::int64_t c = 0; c < chunks; ++c) {
    const double* d = partial.data() + static_cast<std::size_t>(c) * n * n;
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t l = j + 1; l < n; ++l) dist[j * n + l] += d[j * n + l];
  }
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t l = 0; l < j; ++l) dist[j * n + l] = dist[l * n + j];
}

void update_combine(const BlockInputs& in, const double* coeffs, double divisor, double* out) {
  const std::size_t n = in.data.size();
  const auto count = static_cast<std::int64_t>(in.count);
  dispatch_float(in.dtype, [&]<DType T>() {
    const Updates<T> u{in.data.data(), in.base, static_cast<std::uint32_t>(n)};
#pragma omp parallel for schedule(static) if (in.count >= k_parallel_threshold)
    for (std::int64_t s = 0; s < count; ++s) {
      const auto i = static_cast<std::uint64_t>(s);
      out[i] = combine_element(u, coeffs, divisor, i);
    }
  });
}

namespace {

// Equal weights that are a power of two (1, the default, among them) make every partial sum in weighted_median
// exact, so it picks the middle value (odd N) or the mean of the two middle ones (even N) by index; the trimmed
// mean ignores weights. Then the elements are sorted as bare doubles (124M x4 median: 4.1 instead of 5.2 CPU-s).
bool plain_order(const double* weights, std::size_t n, OrderStat stat) {
  if (stat == OrderStat::trimmed_mean) return true;
  int exp = 0;
  if (n == 0 || !(weights[0] > 0) || std::frexp(weights[0], &exp) != 0.5) return false;
  for (std::size_t k = 1; k < n; ++k)
    if (weights[k] != weights[0]) return false;
  return true;
}

// Stable insertion sort by value: the permutation sort_values gives when values arrive in input order (its tie
// rule then never fires), NaNs included, so both paths return the same bits.
void sort_doubles(double* v, std::size_t n) {
  for (std::size_t a = 1; a < n; ++a) {
    const double x = v[a];
    std::size_t b = a;
    while (b > 0 && v[b - 1] > x) {
      v[b] = v[b - 1];
      --b;
    }
    v[b] = x;
  }
}

// The statistic of sorted values v[0], v[stride], ..., v[(n - 1) * stride].
double pick_order_statistic(const double* v, std::size_t n, std::size_t stride, OrderStat stat, std::uint32_t trim) {
  if (stat == OrderStat::median) return n % 2 ? v[n / 2 * stride] : (v[(n / 2 - 1) * stride] + v[n / 2 * stride]) / 2;
  double acc = 0;  // trimmed_mean's sum, in its order
  for (std::size_t k = trim; k < n - trim; ++k) acc += v[k * stride];
  return acc / static_cast<double>(n - 2 * trim);
}

// Whole tiles of k_tile elements go through a selection network (order_network.hpp) when N is small enough and
// the tile holds no NaN or -0; everything else is sorted element by element.
template <DType T>
void plain_order_statistic(const BlockInputs& in, const double* scales, OrderStat stat, std::uint32_t trim,
                           double* out) {
  const std::size_t n = in.data.size();
  const void* const* data = in.data.data();
  const bool median = stat == OrderStat::median;
  const auto lo = static_cast<std::uint32_t>(median ? (n - 1) / 2 : trim);
  const auto hi = static_cast<std::uint32_t>(median ? n / 2 + 1 : n - trim);
  const bool networked = n >= 2 && n <= k_network_max;
  const OrderNetwork net = networked ? make_order_network(static_cast<std::uint32_t>(n), lo, hi) : OrderNetwork{};
  const auto tiles = static_cast<std::int64_t>((in.count + k_tile - 1) / k_tile);
#pragma omp parallel if (in.count >= k_parallel_threshold)
  {
    std::vector<double> v(n * k_tile);
#pragma omp for schedule(dynamic, k_dynamic_elements / k_tile)
    for (std::int64_t t = 0; t < tiles; ++t) {
      const std::uint64_t first = static_cast<std::uint64_t>(t) * k_tile;
      const std::uint64_t m = std::min<std::uint64_t>(k_tile, in.count - first);
      if (networked && m == k_tile) {
        for (std::size_t k = 0; k < n; ++k)
          for (std::uint32_t l = 0; l < k_tile; ++l)
            v[k * k_tile + l] = scales[k] * update_at<T>(data[k], in.base, first + l);
        if (network_exact(v.data(), static_cast<std::uint32_t>(n * k_tile))) {
          apply_order_network(net, v.data());
          for (std::uint32_t l = 0; l < k_tile; ++l)
            out[first + l] = pick_order_statistic(v.data() + l, n, k_tile, stat, trim);
          continue;
        }
      }
      for (std::uint64_t i = first; i < first + m; ++i) {
        for (std::size_t k = 0; k < n; ++k) v[k] = scales[k] * update_at<T>(data[k], in.base, i);
        sort_doubles(v.data(), n);
        out[i] = pick_order_statistic(v.data(), n, 1, stat, trim);
      }
    }
  }
}

}  // namespace

void update_order_statistic(const BlockInputs& in, const double* scales, const double* weights, OrderStat stat,
                            std::uint32_t trim, double* out) {
  const std::size_t n = in.data.size();
  WAVG_ASSERT(stat != OrderStat::trimmed_mean || 2 * std::size_t{trim} < n);
  const auto count = static_cast<std::int64_t>(in.count);
  const bool plain = plain_order(weights, n, stat);
  dispatch_float(in.dtype, [&]<DType T>() {
    if (plain) return plain_order_statistic<T>(in, scales, stat, trim, out);
    const Updates<T> u{in.data.data(), in.base, static_cast<std::uint32_t>(n)};
#pragma omp parallel if (in.count >= k_parallel_threshold)
    {
      std::vector<Valued> v(n);  // per thread, outside the element loop
#pragma omp for schedule(dynamic, k_dynamic_elements)
      for (std::int64_t s = 0; s < count; ++s) {
        const auto i = static_cast<std::uint64_t>(s);
        out[i] = order_statistic_element(u, scales, weights, stat, trim, i, v.data());
      }
    }
  });
}

void add_gaussian_noise(double* values, std::uint64_t count, double sigma, std::uint64_t seed, std::uint64_t stream,
                        std::uint64_t offset) {
  const auto n = static_cast<std::int64_t>(count);
#pragma omp parallel for schedule(static) if (count >= k_parallel_threshold)
  for (std::int64_t s = 0; s < n; ++s) {
    const auto i = static_cast<std::uint64_t>(s);
    values[i] += sigma * philox_normal(seed, stream, offset + i);
  }
}

void server_step(const ServerStepParams& params, std::uint64_t count, const double* delta, const void* base,
                 DType dtype, double* m, double* v, DType out_dtype, void* out) {
  const auto n = static_cast<std::int64_t>(count);
  dispatch_float(dtype, [&]<DType T>() {
    dispatch_float(out_dtype, [&]<DType O>() {
#pragma omp parallel for schedule(static) if (count >= k_parallel_threshold)
      for (std::int64_t s = 0; s < n; ++s) {
        const auto i = static_cast<std::uint64_t>(s);
        const double step = server_step_element(params, delta[i], m ? m + i : nullptr, v ? v + i : nullptr);
        store<O>(out, i, base ? load<T>(base, i) + step : step);
      }
    });
  });
}

}  // namespace wavg::cpu
