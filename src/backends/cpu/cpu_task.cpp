// CPU kernels for the task-vector methods (TIES, DARE, task arithmetic, SLERP, model stock). Like the federated
// kernels: element-wise work is split statically over OpenMP threads and runs over inputs in order; the Gram
// matrix is summed in fixed chunks added in chunk order; histograms are integer counts, so any split gives the same
// result; candidates are sorted by the caller, so their order does not matter.
//
// The element-wise kernels go through tiles of k_tile elements, one array per step (the updates of one input, its
// mask, the running sums), so that every inner loop runs over contiguous elements with no branch on the method and
// vectorises; they are compiled for AVX-512, AVX2 and the SSE2 baseline (WAVG_CLONES). Each element still sees the
// same IEEE operations in the same order as one scalar loop over inputs would apply (no FMA: -ffp-contract=off), so
// the bits do not depend on the tile, the thread count or the instruction set.

#include "backends/cpu/cpu_task.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "backends/cpu/cpu_elements.hpp"
#include "wavg/philox.hpp"

namespace wavg::cpu {

namespace {

constexpr std::size_t k_tile = 512;
static_assert(k_tile % 64 == 0, "a tile's drop mask is whole words of TaskCombineParams::kept");
// u[i] = x[first + i] - base[first + i] (x itself without a base), as double: update_at over a tile.
WAVG_CLONES void updates(double* __restrict u, const LooseF32* __restrict x, const LooseF32* __restrict base,
                         std::size_t len) {
  if (base)
    for (std::size_t i = 0; i < len; ++i) u[i] = static_cast<double>(x[i]) - static_cast<double>(base[i]);
  else
    for (std::size_t i = 0; i < len; ++i) u[i] = static_cast<double>(x[i]);
}
WAVG_CLONES void updates(double* __restrict u, const LooseF64* __restrict x, const LooseF64* __restrict base,
                         std::size_t len) {
  if (base)
    for (std::size_t i = 0; i < len; ++i) u[i] = x[i] - base[i];
  else
    for (std::size_t i = 0; i < len; ++i) u[i] = x[i];
}
// x and base may start at any byte address (cpu_elements.hpp).
template <DType T>
void load_updates(double* u, const void* x, const void* base, std::uint64_t first, std::size_t len) {
  if constexpr (T == DType::f32)
    updates(u, static_cast<const LooseF32*>(x) + first, base ? static_cast<const LooseF32*>(base) + first : nullptr,
            len);
  else if constexpr (T == DType::f64)
    updates(u, static_cast<const LooseF64*>(x) + first, base ? static_cast<const LooseF64*>(base) + first : nullptr,
            len);
  else
    for (std::size_t i = 0; i < len; ++i) u[i] = update_at<T>(x, base, first + i);
}

WAVG_CLONES void buckets_of(std::uint32_t* __restrict bucket, const double* __restrict u, std::size_t len) {
  for (std::size_t i = 0; i < len; ++i) bucket[i] = magnitude_bucket(u[i]);
}

// The four words of philox_block(seed, stream, first + i) for i < len, computed lane by lane: the same rounds as
// philox4x32_10, laid out so that each round is one vectorisable loop.
WAVG_CLONES void philox_words(std::uint64_t seed, std::uint64_t stream, std::uint64_t first, std::size_t len,
                              std::uint32_t (*__restrict w)[k_tile]) {
  std::uint32_t* __restrict c0 = w[0];
  std::uint32_t* __restrict c1 = w[1];
  std::uint32_t* __restrict c2 = w[2];
  std::uint32_t* __restrict c3 = w[3];
  for (std::size_t i = 0; i < len; ++i) {
    c0[i] = static_cast<std::uint32_t>(first + i);
    c1[i] = static_cast<std::uint32_t>((first + i) >> 32);
    c2[i] = static_cast<std::uint32_t>(stream);
    c3[i] = static_cast<std::uint32_t>(stream >> 32);
  }
  std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += k_philox_w0;
      k1 += k_philox_w1;
    }
    for (std::size_t i = 0; i < len; ++i) {
      const std::uint64_t p0 = std::uint64_t{k_philox_m0} * c0[i];
      const std::uint64_t p1 = std::uint64_t{k_philox_m1} * c2[i];
      const std::uint32_t a = static_cast<std::uint32_t>(p1 >> 32) ^ c1[i] ^ k0;
      const std::uint32_t b = static_cast<std::uint32_t>(p0 >> 32) ^ c3[i] ^ k1;
      c0[i] = a;
      c1[i] = static_cast<std::uint32_t>(p1);
      c2[i] = b;
      c3[i] = static_cast<std::uint32_t>(p0);
    }
  }
}

// TIES's trim: u[i] stays when |u[i]| > threshold, or equals it at element index first + i <= tie_last.
WAVG_CLONES void keep_magnitude(double* __restrict u, std::size_t len, double threshold, std::uint64_t first,
                                std::uint64_t tie_last) {
  for (std::size_t i = 0; i < len; ++i) u[i] = ranks_at_or_above(u[i], threshold, first + i, tie_last) ? u[i] : 0.0;
}

// Breadcrumbs' band: of what keep_magnitude keeps, u[i] is dropped too when it ranks at or above the second cut
// (|u[i]| > drop, or equal at an index <= drop_last; a NaN drop compares false and drops nothing).
WAVG_CLONES void drop_magnitude(double* __restrict u, std::size_t len, double drop, std::uint64_t first,
                                std::uint64_t drop_last) {
  for (std::size_t i = 0; i < len; ++i) u[i] = ranks_at_or_above(u[i], drop, first + i, drop_last) ? 0.0 : u[i];
}

// DARE's drop and rescale: u[i] stays, divided by the density, when word[i] / 2^32 is below it.
WAVG_CLONES void keep_random(double* __restrict u, const std::uint32_t* __restrict word, double density,
                             std::size_t len) {
  for (std::size_t i = 0; i < len; ++i) u[i] = kept_at_random(word[i], density) ? u[i] / density : 0.0;
}
// The same drop, the kept entries multiplied by `scale` (mergekit >= 0.1's norm ratio, or 1).
WAVG_CLONES void keep_random_scaled(double* __restrict u, const std::uint32_t* __restrict word, double density,
                                    double scale, std::size_t len) {
  for (std::size_t i = 0; i < len; ++i) u[i] = kept_at_random(word[i], density) ? u[i] * scale : 0.0;
}

// The same drop with the mask already drawn: bits[i / 64] bit i % 64 set where u[i] stays.
WAVG_CLONES void keep_bits_scaled(double* __restrict u, const std::uint64_t* __restrict bits, double scale,
                                  std::size_t len) {
  for (std::size_t i = 0; i < len; ++i) u[i] = (bits[i / 64] >> (i % 64)) & 1 ? u[i] * scale : 0.0;
}
// Packs the drop mask of a tile into bits as keep_bits_scaled reads it (len bits, the last word's high bits 0).
WAVG_CLONES void pack_kept(const std::uint32_t* __restrict word, double density, std::size_t len,
                           std::uint64_t* __restrict bits) {
  for (std::size_t w = 0; w * 64 < len; ++w) {
    const std::size_t end = std::min<std::size_t>(64, len - w * 64);
    std::uint64_t b = 0;
    for (std::size_t j = 0; j < end; ++j) b |= std::uint64_t{kept_at_random(word[w * 64 + j], density)} << j;
    bits[w] = b;
  }
}

// DARE's two L1 norms of one input over a tile whose first element is a multiple of k_sum_lanes from its reduction
// chunk's: |u[i]| is added to lane i % k_sum_lanes of lanes[0..] and, where word[i] / 2^32 is below the density, of
// lanes[k_sum_lanes..] (+0 elsewhere, which leaves a sum of magnitudes as it is), so the additions vectorise.
WAVG_CLONES void l1_lanes(const double* __restrict u, const std::uint32_t* __restrict word, double density,
                          std::size_t len, double* __restrict lanes) {
  double* __restrict total = lanes;
  double* __restrict kept = lanes + k_sum_lanes;
  std::size_t i = 0;
  for (; i + k_sum_lanes <= len; i += k_sum_lanes)
    for (std::uint32_t e = 0; e < k_sum_lanes; ++e) {
      const double m = std::fabs(u[i + e]);
      total[e] += m;
      kept[e] += kept_at_random(word[i + e], density) ? m : 0.0;
    }
  for (std::uint32_t e = 0; i + e < len; ++e) {
    const double m = std::fabs(u[i + e]);
    total[e] += m;
    kept[e] += kept_at_random(word[i + e], density) ? m : 0.0;
  }
}

// wt[i] = w * u[i] (in place), sum[i] += wt[i].
WAVG_CLONES void weigh_and_add(double* __restrict wt, double w, double* __restrict sum, std::size_t len) {
  for (std::size_t i = 0; i < len; ++i) {
    wt[i] = w * wt[i];
    sum[i] += wt[i];
  }
}

// TIES's sign election for one input: wt[i] counts when it has the sign elected by all[i] (mergekit's majority
// sign: + when the sum is >= 0; an entry of sign 0 or NaN never agrees).
WAVG_CLONES void add_agreeing(const double* __restrict wt, double w, const double* __restrict all,
                              double* __restrict sum, double* __restrict divisor, std::size_t len) {
  for (std::size_t i = 0; i < len; ++i) {
    const bool agree = agrees_with(wt[i], all[i]);
    sum[i] = agree ? sum[i] + wt[i] : sum[i];
    divisor[i] = agree ? divisor[i] + w : divisor[i];
  }
}

WAVG_CLONES void divide_by(double* __restrict sum, const double* __restrict divisor, std::size_t len) {
  for (std::size_t i = 0; i < len; ++i) sum[i] /= divisor[i] == 0 ? 1.0 : divisor[i];
}

// out[i] = base[i] + lambda * sum[i] (0 + ... without a base), rounded once to the output's dtype.
WAVG_CLONES void finish_task(float* __restrict out, const LooseF32* __restrict base, const double* __restrict sum,
                             double lambda, std::size_t len) {
  if (base)
    for (std::size_t i = 0; i < len; ++i) out[i] = static_cast<float>(static_cast<double>(base[i]) + lambda * sum[i]);
  else
    for (std::size_t i = 0; i < len; ++i) out[i] = static_cast<float>(0.0 + lambda * sum[i]);
}
WAVG_CLONES void finish_task(double* __restrict out, const LooseF64* __restrict base, const double* __restrict sum,
                             double lambda, std::size_t len) {
  if (base)
    for (std::size_t i = 0; i < len; ++i) out[i] = base[i] + lambda * sum[i];
  else
    for (std::size_t i = 0; i < len; ++i) out[i] = 0.0 + lambda * sum[i];
}
// out is the engine's aligned buffer; base may start at any byte address (cpu_elements.hpp).
template <DType T, DType O>
void store_task(void* out, const void* base, const double* sum, double lambda, std::uint64_t first, std::size_t len) {
  if constexpr (T == O && T == DType::f32)
    finish_task(static_cast<float*>(out) + first, base ? static_cast<const LooseF32*>(base) + first : nullptr, sum,
                lambda, len);
  else if constexpr (T == O && T == DType::f64)
    finish_task(static_cast<double*>(out) + first, base ? static_cast<const LooseF64*>(base) + first : nullptr, sum,
                lambda, len);
  else
    for (std::size_t i = 0; i < len; ++i) {
      const double b = base ? load<T>(base, first + i) : 0.0;
      store<O>(out, first + i, b + lambda * sum[i]);
    }
}

// g[j * n + l] += u_j[i] * u_l[i] for every pair j <= l, element after element (u_k: row k of a tile). Each sum
// is one chain of additions in element order, as the Gram matrix's contract says; for up to 8 inputs the sums live
// in registers, so the chains of all pairs run side by side instead of going through memory.
template <std::size_t N>
void add_products_fixed(double* g, const double* u, std::size_t len) {
  double acc[N][N];
  for (std::size_t j = 0; j < N; ++j)
    for (std::size_t l = j; l < N; ++l) acc[j][l] = g[j * N + l];
  for (std::size_t i = 0; i < len; ++i)
    for (std::size_t j = 0; j < N; ++j)
      for (std::size_t l = j; l < N; ++l) acc[j][l] += u[j * k_tile + i] * u[l * k_tile + i];
  for (std::size_t j = 0; j < N; ++j)
    for (std::size_t l = j; l < N; ++l) g[j * N + l] = acc[j][l];
}
void add_products(double* g, const double* u, std::size_t n, std::size_t len) {
  switch (n) {
    case 1: return add_products_fixed<1>(g, u, len);
    case 2: return add_products_fixed<2>(g, u, len);
    case 3: return add_products_fixed<3>(g, u, len);
    case 4: return add_products_fixed<4>(g, u, len);
    case 5: return add_products_fixed<5>(g, u, len);
    case 6: return add_products_fixed<6>(g, u, len);
    case 7: return add_products_fixed<7>(g, u, len);
    case 8: return add_products_fixed<8>(g, u, len);
    default:
      for (std::size_t i = 0; i < len; ++i)
        for (std::size_t j = 0; j < n; ++j)
          for (std::size_t l = j; l < n; ++l) g[j * n + l] += u[j * k_tile + i] * u[l * k_tile + i];
  }
}

// Runs visit(state, first, len, u, bucket) on every tile of input k's updates u with their magnitude buckets, each
// thread on its share of the tiles with its own copy of `state`, which merge(state) then takes in, one thread at a
// time.
template <class State, class Visit, class Merge>
void bucket_tiles(const BlockInputs& in, std::size_t k, const State& state, Visit visit, Merge merge) {
  dispatch_float(in.dtype, [&]<DType T>() {
    const auto tiles = static_cast<std::int64_t>((in.count + k_tile - 1) / k_tile);
#pragma omp parallel if (in.count >= k_parallel_threshold)
    {
      State local = state;
      alignas(64) double u[k_tile];
      alignas(64) std::uint32_t bucket[k_tile];
#pragma omp for schedule(static)
      for (std::int64_t t = 0; t < tiles; ++t) {
        const std::uint64_t first = static_cast<std::uint64_t>(t) * k_tile;
        const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(k_tile, in.count - first));
        load_updates<T>(u, in.data[k], in.base, first, len);
        buckets_of(bucket, u, len);
        visit(local, first, len, u, bucket);
      }
#pragma omp critical
      merge(local);
    }
  });
}

// One thread's tile arrays for task_combine.
struct TaskTile {
  explicit TaskTile(std::size_t inputs) : wt(inputs * k_tile) {}
  std::vector<double> wt;  // w_k * tau_k after sparsification, input after input
  alignas(64) double sum[k_tile];
  alignas(64) double agreeing[k_tile];
  alignas(64) double divisor[k_tile];
  alignas(64) std::uint32_t words[4][k_tile];  // one Philox block per element: the masks of four inputs
};

// task_combine on elements [first, first + len) of the block.
template <DType T, DType O>
void task_combine_tile(const BlockInputs& in, const TaskCombineParams& p, std::uint64_t offset, void* out,
                       std::uint64_t first, std::size_t len, TaskTile& tile) {
  const std::size_t n = in.data.size();
  std::fill_n(tile.sum, len, 0.0);
  for (std::size_t k = 0; k < n; ++k) {
    double* wt = tile.wt.data() + (p.consensus == Consensus::sign ? k * k_tile : 0);
    load_updates<T>(wt, in.data[k], in.base, first, len);
    if (p.sparsify == Sparsify::magnitude) {
      keep_magnitude(wt, len, p.threshold[k], offset + first, p.tie_last[k]);
      if (p.drop_threshold) drop_magnitude(wt, len, p.drop_threshold[k], offset + first, p.drop_tie_last[k]);
    } else if (p.sparsify == Sparsify::random && p.kept) {
      keep_bits_scaled(wt, p.kept + k * ((in.count + 63) / 64) + first / 64, p.scale[k], len);
    } else if (p.sparsify == Sparsify::random) {
      if (k % 4 == 0) philox_words(p.seed, mask_stream(p.stream, k), offset + first, len, tile.words);
      const double density = p.densities ? p.densities[k] : p.density;
      if (p.scale)
        keep_random_scaled(wt, tile.words[k % 4], density, p.scale[k], len);
      else
        keep_random(wt, tile.words[k % 4], density, len);
    }
    weigh_and_add(wt, p.weights[k], tile.sum, len);
  }
  double* result = tile.sum;
  if (p.consensus == Consensus::sign) {
    std::fill_n(tile.agreeing, len, 0.0);
    std::fill_n(tile.divisor, len, 0.0);
    for (std::size_t k = 0; k < n; ++k)
      add_agreeing(tile.wt.data() + k * k_tile, p.weights[k], tile.sum, tile.agreeing, tile.divisor, len);
    result = tile.agreeing;
    if (p.normalize == Normalize::yes) divide_by(result, tile.divisor, len);
  } else if (p.normalize == Normalize::yes) {
    double divisor = 0;
    for (std::size_t k = 0; k < n; ++k) divisor += p.weights[k];
    if (std::fabs(divisor) < 1e-8) divisor = 1;
    for (std::size_t i = 0; i < len; ++i) result[i] /= divisor;
  }
  store_task<T, O>(out, in.base, result, p.lambda, first, len);
}

}  // namespace

void update_gram(const BlockInputs& in, double* gram) {
  const std::size_t n = in.data.size();
  const auto chunks = static_cast<std::int64_t>(reduce_chunks(in.count));
  std::vector<double> partial(static_cast<std::size_t>(chunks) * n * n, 0.0);
  dispatch_float(in.dtype, [&]<DType T>() {
    const void* const* data = in.data.data();
#pragma omp parallel if (in.count >= k_parallel_threshold)
    {
      std::vector<double> u(n * k_tile);  // the updates of one tile, input after input
#pragma omp for schedule(static)
      for (std::int64_t c = 0; c < chunks; ++c) {
        double* g = partial.data() + static_cast<std::size_t>(c) * n * n;
        const std::uint64_t begin = static_cast<std::uint64_t>(c) * k_reduce_chunk;
        const std::uint64_t end = std::min(in.count, begin + k_reduce_chunk);
        for (std::uint64_t first = begin; first < end; first += k_tile) {
          const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(k_tile, end - first));
          for (std::size_t k = 0; k < n; ++k) load_updates<T>(u.data() + k * k_tile, data[k], in.base, first, len);
          add_products(g, u.data(), n, len);
        }
      }
    }
  });
  for (std::int64_t c = 0; c < chunks; ++c) {
    const double* g = partial.data() + static_cast<std::size_t>(c) * n * n;
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t l = j; l < n; ++l) gram[j * n + l] += g[j * n + l];
  }
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t l = 0; l < j; ++l) gram[j * n + l] = gram[l * n + j];
}

void magnitude_histogram(const BlockInputs& in, std::size_t k, std::uint64_t* hist) {
  // Each thread counts into its own histogram; the last slot counts zeros and NaNs.
  bucket_tiles(
      in, k, std::vector<std::uint64_t>(k_magnitude_buckets + 1, 0),
      [](std::vector<std::uint64_t>& local, std::uint64_t, std::size_t len, const double*, const std::uint32_t* b) {
        for (std::size_t i = 0; i < len; ++i) ++local[b[i]];
      },
      [&](const std::vector<std::uint64_t>& local) {
        for (std::size_t b = 0; b < k_magnitude_buckets; ++b) hist[b] += local[b];
      });
}

void magnitude_candidates(const BlockInputs& in, std::size_t k, std::size_t bucket, std::uint64_t offset,
                          std::vector<Magnitude>& out) {
  bucket_tiles(
      in, k, std::vector<Magnitude>(),
      [&](std::vector<Magnitude>& local, std::uint64_t first, std::size_t len, const double* u,
          const std::uint32_t* b) {
        for (std::size_t i = 0; i < len; ++i)
          if (b[i] == bucket) local.push_back({std::fabs(u[i]), offset + first + i});
      },
      [&](const std::vector<Magnitude>& local) { out.insert(out.end(), local.begin(), local.end()); });
}

void random_mask_l1(const BlockInputs& in, const TaskCombineParams& p, std::uint64_t offset, double* l1) {
  const std::size_t n = in.data.size();
  const auto chunks = static_cast<std::int64_t>(reduce_chunks(in.count));
  std::vector<double> partial(static_cast<std::size_t>(chunks) * n * 2, 0.0);
  dispatch_float(in.dtype, [&]<DType T>() {
#pragma omp parallel if (in.count >= k_parallel_threshold)
    {
      alignas(64) double u[k_tile];
      alignas(64) std::uint32_t words[4][k_tile];
      std::vector<double> lanes(2 * n * k_sum_lanes);  // per input: its L1 norm's lanes, then the kept part's
#pragma omp for schedule(dynamic, std::max<std::int64_t>(1, k_dynamic_elements / std::int64_t{k_reduce_chunk}))
      for (std::int64_t c = 0; c < chunks; ++c) {
        double* sums = partial.data() + static_cast<std::size_t>(c) * n * 2;
        const std::uint64_t begin = static_cast<std::uint64_t>(c) * k_reduce_chunk;
        const std::uint64_t end = std::min(in.count, begin + k_reduce_chunk);
        std::fill(lanes.begin(), lanes.end(), 0.0);
        for (std::uint64_t first = begin; first < end; first += k_tile) {
          const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(k_tile, end - first));
          for (std::size_t k = 0; k < n; ++k) {
            if (k % 4 == 0) philox_words(p.seed, mask_stream(p.stream, k), offset + first, len, words);
            load_updates<T>(u, in.data[k], in.base, first, len);
            const double density = p.densities ? p.densities[k] : p.density;
            l1_lanes(u, words[k % 4], density, len, lanes.data() + 2 * k * k_sum_lanes);
            if (p.kept) pack_kept(words[k % 4], density, len, p.kept + k * ((in.count + 63) / 64) + first / 64);
          }
        }
        for (std::size_t j = 0; j < 2 * n; ++j) sums[j] = sum_lanes_total(lanes.data() + j * k_sum_lanes);
      }
    }
  });
  for (std::int64_t c = 0; c < chunks; ++c)
    for (std::size_t j = 0; j < n * 2; ++j) l1[j] += partial[static_cast<std::size_t>(c) * n * 2 + j];
}

void task_combine(const BlockInputs& in, const TaskCombineParams& p, std::uint64_t offset, DType out_dtype, void* out) {
  const std::size_t n = in.data.size();
  const auto tiles = static_cast<std::int64_t>((in.count + k_tile - 1) / k_tile);
  dispatch_float(in.dtype, [&]<DType T>() {
    dispatch_float(out_dtype, [&]<DType O>() {
#pragma omp parallel if (in.count >= k_parallel_threshold)
      {
        auto tile = std::make_unique<TaskTile>(n);
#pragma omp for schedule(dynamic, k_dynamic_elements / std::int64_t{k_tile})
        for (std::int64_t t = 0; t < tiles; ++t) {
          const std::uint64_t first = static_cast<std::uint64_t>(t) * k_tile;
          const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(k_tile, in.count - first));
          task_combine_tile<T, O>(in, p, offset, out, first, len, *tile);
        }
      }
    });
  });
}

}  // namespace wavg::cpu
