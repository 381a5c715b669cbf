#pragma once
// Per-element arithmetic that the CPU backend and the CUDA kernels must do identically, written once as
// __host__ __device__ functions: float16/bfloat16 rounding and widening from the bits, loading and storing one
// element of any float dtype, the reduction chunk, the order statistics' sort and weighted median, the federated
// kernels' formulas (sum of squares and distance chunks, combine, order statistics) and the server optimizers'
// step, and the task-vector kernels' rules (magnitude buckets and cuts, DARE's drop mask, TIES's sign election). The
// CPU build compiles them as plain inline functions; nvcc (with -fmad=false, like g++'s
// -ffp-contract=off) compiles the same source for the GPU, so results agree bit for bit by construction.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "wavg/backend.hpp"
#include "wavg/philox.hpp"

#if defined(__CUDACC__)
#define WAVG_HD __host__ __device__
#else
#define WAVG_HD
#endif

namespace wavg {

WAVG_HD inline std::uint64_t double_bits(double v) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(v));
#else
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
#endif
}

WAVG_HD inline double bits_double(std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(b));
#else
  double v;
  std::memcpy(&v, &b, sizeof v);
  return v;
#endif
}

// Rounds a double to a binary float with `exp_bits` exponent and `mant_bits` explicit mantissa bits, ties to even,
// returning the bit pattern (sign in bit exp_bits + mant_bits). Working from the double's bits rounds exactly once:
// going through float first would round twice and can be off by one ulp at ties.
WAVG_HD inline std::uint32_t round_to_small_float(double value, int exp_bits, int mant_bits) {
  const std::uint64_t bits = double_bits(value);
  const std::uint32_t sign = static_cast<std::uint32_t>(bits >> 63) << (exp_bits + mant_bits);
  const std::uint64_t magnitude = bits & 0x7fff'ffff'ffff'ffffull;
  const std::uint32_t exp_all_ones = (1u << exp_bits) - 1;
  const std::uint32_t infinity = exp_all_ones << mant_bits;
  if (magnitude >= 0x7ff0'0000'0000'0000ull) {
    if (magnitude == 0x7ff0'0000'0000'0000ull) return sign | infinity;
    // NaN: quiet, keeping the top payload bits.
    const auto payload = static_cast<std::uint32_t>((magnitude & 0x000f'ffff'ffff'ffffull) >> (52 - mant_bits));
    return sign | infinity | (1u << (mant_bits - 1)) | payload;
  }
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int exponent = static_cast<int>(magnitude >> 52) - 1023;
  const std::uint64_t significand = (magnitude & 0x000f'ffff'ffff'ffffull) | (1ull << 52);
  if (exponent > bias) return sign | infinity;
  const int min_normal = 1 - bias;
  // Normal results keep the exponent field; subnormal results are multiples of 2^(min_normal - mant_bits).
  int shift = 52 - mant_bits;
  std::uint64_t base = 0;
  if (exponent >= min_normal) {
    base = static_cast<std::uint64_t>(exponent + bias) << mant_bits;
  } else {
    shift += min_normal - exponent;
    if (shift >= 64) return sign;  // far below half the smallest subnormal
  }
  const std::uint64_t kept =
      exponent >= min_normal ? (significand & 0x000f'ffff'ffff'ffffull) >> shift : significand >> shift;
  const std::uint64_t rest = significand & ((1ull << shift) - 1);
  const std::uint64_t half = 1ull << (shift - 1);
  std::uint64_t result = base + kept;
  if (rest > half || (rest == half && (result & 1u))) ++result;  // a carry into the exponent is correct rounding
  return sign | static_cast<std::uint32_t>(result);
}

// Widens a binary16/bfloat16 pattern exactly, building the double's bits (every such value is a normal double).
// NaN becomes the quiet NaN with the pattern's sign.
WAVG_HD inline double small_float_to_double(std::uint32_t bits, int exp_bits, int mant_bits) {
  const std::uint64_t sign = static_cast<std::uint64_t>((bits >> (exp_bits + mant_bits)) & 1u) << 63;
  const std::uint32_t exp_field = (bits >> mant_bits) & ((1u << exp_bits) - 1);
  std::uint64_t mant = bits & ((1u << mant_bits) - 1);
  const int bias = (1 << (exp_bits - 1)) - 1;
  if (exp_field == (1u << exp_bits) - 1)
    return bits_double(sign | (mant ? 0x7ff8'0000'0000'0000ull : 0x7ff0'0000'0000'0000ull));
  int exponent = static_cast<int>(exp_field) - bias;
  if (exp_field == 0) {
    if (mant == 0) return bits_double(sign);
    exponent = 1 - bias;  // subnormal: normalise the mantissa, which a double has room for
    while (!(mant & (1ull << mant_bits))) {
      mant <<= 1;
      --exponent;
    }
    mant &= (1ull << mant_bits) - 1;
  }
  return bits_double(sign | (static_cast<std::uint64_t>(exponent + 1023) << 52) | (mant << (52 - mant_bits)));
}

// Elements per reduction chunk: fixed, so the summation tree depends neither on the thread count nor on the device.
constexpr std::uint64_t k_reduce_chunk = 1 << 14;
WAVG_HD constexpr std::uint64_t reduce_chunks(std::uint64_t count) {
  return (count + k_reduce_chunk - 1) / k_reduce_chunk;
}

template <DType T>
struct Storage;
template <>
struct Storage<DType::f16> {
  using type = std::uint16_t;
};
template <>
struct Storage<DType::bf16> {
  using type = std::uint16_t;
};
template <>
struct Storage<DType::f32> {
  using type = float;
};
template <>
struct Storage<DType::f64> {
  using type = double;
};

// Element i of a float array of dtype T, as double (exact: every such value is a double). On the host the array
// may start at any byte address: readers lend elements where the file holds them (a DCP chunk after an odd-length
// torch.save archive, a packed Caffe field), so the load is a memcpy, which GCC compiles to one unaligned load and
// vectorises as any other. The CUDA kernels read their own device buffers, which are aligned.
template <DType T>
WAVG_HD inline double load(const void* p, std::uint64_t i) {
  using S = typename Storage<T>::type;
#if defined(__CUDA_ARCH__)
  const S v = static_cast<const S*>(p)[i];
#else
  S v;
  std::memcpy(&v, static_cast<const unsigned char*>(p) + i * sizeof(S), sizeof v);
#endif
  if constexpr (T == DType::f16)
    return small_float_to_double(v, 5, 10);
  else if constexpr (T == DType::bf16)
    return small_float_to_double(v, 8, 7);
  else
    return static_cast<double>(v);
}

// Stores v as element i, rounded once to nearest (ties to even).
template <DType T>
WAVG_HD inline void store(void* p, std::uint64_t i, double v) {
  auto* out = static_cast<typename Storage<T>::type*>(p);
  if constexpr (T == DType::f16)
    out[i] = static_cast<std::uint16_t>(round_to_small_float(v, 5, 10));
  else if constexpr (T == DType::bf16)
    out[i] = static_cast<std::uint16_t>(round_to_small_float(v, 8, 7));
  else
    out[i] = static_cast<typename Storage<T>::type>(v);
}

// One input's value in an order statistic.
struct Valued {
  double value, weight;
  std::uint32_t input;
};

// Sorts by value, ties by input index: insertion sort, as N is small and the order must be total.
WAVG_HD inline void sort_values(Valued* v, std::uint32_t n) {
  for (std::uint32_t a = 1; a < n; ++a) {
    const Valued x = v[a];
    std::uint32_t b = a;
    while (b > 0 && (v[b - 1].value > x.value || (v[b - 1].value == x.value && v[b - 1].input > x.input))) {
      v[b] = v[b - 1];
      --b;
    }
    v[b] = x;
  }
}

// The weighted median of sorted values with positive weights: the first value whose cumulative weight reaches half
// the total; when it reaches exactly half, the mean of that value and the next (so equal weights give the usual
// median, the mean of the two middle values for even N).
WAVG_HD inline double weighted_median(const Valued* v, std::uint32_t n) {
  double total = 0;
  for (std::uint32_t k = 0; k < n; ++k) total += v[k].weight;
  double cum = 0;
  for (std::uint32_t k = 0; k < n; ++k) {
    cum += v[k].weight;
    if (2 * cum == total && k + 1 < n) return (v[k].value + v[k + 1].value) / 2;
    if (2 * cum >= total) return v[k].value;
  }
  return v[n - 1].value;
}

// The update u = x[i] - base[i] (x[i] itself when base is null) of a float array of dtype T, as double.
template <DType T>
WAVG_HD inline double update_at(const void* x, const void* base, std::uint64_t i) {
  const double v = load<T>(x, i);
  return base ? v - load<T>(base, i) : v;
}

// The federated kernels' formulas, over an accessor `in` of one block's N inputs: in.n() inputs and in.update(k, i),
// input k's update at element i. The CPU backend's accessor reads N pointers, the CUDA kernels' one strided device
// buffer; the loops around these (threads, chunks, the order partial sums are added in) are each backend's own.

// The sum of u_k^2 over elements [begin, end), in element order: one reduction chunk.
template <class In>
WAVG_HD inline double sum_squares_chunk(const In& in, std::uint32_t k, std::uint64_t begin, std::uint64_t end) {
  double acc = 0;
  for (std::uint64_t i = begin; i < end; ++i) {
    const double u = in.update(k, i);
    acc += u * u;
  }
  return acc;
}

// The term element i adds to the squared distance of inputs j and l, with y_k = scales[k] * u_k.
WAVG_HD inline double sq_distance_term(double yj, double yl) {
  const double diff = yj - yl;
  return diff * diff;
}

// Long sums over elements (the squared distances here, DARE's L1 norms on the CPU) run in k_sum_lanes interleaved
// lanes: element begin + i goes to lane i % k_sum_lanes, each lane sums in element order, and the lanes are added
// by sum_lanes_total's fixed tree. One running sum would be one chain of dependent additions; lanes let a CPU
// kernel keep a vector of sums (cpu_federated.cpp, cpu_task.cpp), on every instruction set and device with the
// same bits.
constexpr std::uint32_t k_sum_lanes = 8;
WAVG_HD inline double sum_lanes_total(const double* acc) {
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// The sum of (y_j - y_l)^2 over elements [begin, end), in lanes: one reduction chunk.
template <class In>
WAVG_HD inline double sq_distance_chunk(const In& in, const double* scales, std::uint32_t j, std::uint32_t l,
                                        std::uint64_t begin, std::uint64_t end) {
  double acc[k_sum_lanes] = {};
  for (std::uint64_t i = begin; i < end; ++i)
    acc[(i - begin) % k_sum_lanes] += sq_distance_term(scales[j] * in.update(j, i), scales[l] * in.update(l, i));
  return sum_lanes_total(acc);
}

// Backend::update_combine for one element: (c_1 u_1 + c_2 u_2 + ...) / divisor, in input order.
template <class In>
WAVG_HD inline double combine_element(const In& in, const double* coeffs, double divisor, std::uint64_t i) {
  double acc = 0;
  for (std::uint32_t k = 0; k < in.n(); ++k) acc += coeffs[k] * in.update(k, i);
  return acc / divisor;
}

// The mean of sorted values v[trim .. n - trim), value(v[k]) giving each one's value.
template <class V, class Value>
WAVG_HD inline double trimmed_mean(const V* v, std::uint32_t n, std::uint32_t trim, Value value) {
  double acc = 0;
  for (std::uint32_t k = trim; k < n - trim; ++k) acc += value(v[k]);
  return acc / static_cast<double>(n - 2 * trim);
}

// Backend::update_order_statistic for one element (weighted median, or trimmed mean); `v` has room for N values.
// A zero weight takes no part in the median.
template <class In>
WAVG_HD inline double order_statistic_element(const In& in, const double* scales, const double* weights, OrderStat stat,
                                              std::uint32_t trim, std::uint64_t i, Valued* v) {
  std::uint32_t m = 0;
  for (std::uint32_t k = 0; k < in.n(); ++k) {
    if (stat == OrderStat::median && !(weights[k] > 0)) continue;
    v[m++] = {scales[k] * in.update(k, i), weights[k], k};
  }
  sort_values(v, m);
  if (stat == OrderStat::trimmed_mean) return trimmed_mean(v, in.n(), trim, [](const Valued& x) { return x.value; });
  return weighted_median(v, m);
}

WAVG_HD inline double sign_of(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }

// The server optimizer for one element (wavg-merge(1), SERVER OPTIMIZERS): returns the step for update `d`,
// advancing the first and second moments *m and *v (unused by none and sgd; *v unused by momentum).
WAVG_HD inline double server_step_element(const ServerStepParams& p, double d, double* m, double* v) {
  switch (p.kind) {
    case ServerOptKind::none: return d;
    case ServerOptKind::sgd: return p.lr * d;
    case ServerOptKind::momentum: *m = p.beta1 * *m + d; return p.lr * *m;
    default: break;
  }
  *m = p.beta1 * *m + (1 - p.beta1) * d;
  const double d2 = d * d;
  if (p.kind == ServerOptKind::adam)
    *v = p.beta2 * *v + (1 - p.beta2) * d2;
  else if (p.kind == ServerOptKind::yogi)
    *v = *v - (1 - p.beta2) * d2 * sign_of(*v - d2);
  else
    *v = *v + d2;  // adagrad
  return p.lr * *m / (std::sqrt(*v) + p.tau);
}

// The task-vector kernels' per-element rules (Backend::task_combine and its companions in wavg/backend.hpp). The CPU
// backend applies them in tile loops (cpu_task.cpp), the CUDA kernels per element (cuda_elements.hpp).

// magnitude_histogram's bucket of |u|: the top 16 bits of the double, which order as the values do; a zero or NaN
// magnitude gets k_magnitude_buckets, which no histogram counts.
WAVG_HD inline std::uint32_t magnitude_bucket(double u) {
  const double m = std::fabs(u);
  return m > 0 ? static_cast<std::uint32_t>(double_bits(m) >> 48) : static_cast<std::uint32_t>(k_magnitude_buckets);
}

// Whether u at element `index` of its tensor ranks at or above a magnitude cut: |u| > threshold, or equal to it at
// an index <= last (TIES's trim keeps these; breadcrumbs' second cut drops them). NaN ranks nowhere.
WAVG_HD inline bool ranks_at_or_above(double u, double threshold, std::uint64_t index, std::uint64_t last) {
  const double m = std::fabs(u);
  return m > threshold || (m == threshold && index <= last);
}

// DARE's drop mask: the entry stays when its Philox word, over 2^32, is below the density.
WAVG_HD inline bool kept_at_random(std::uint32_t word, double density) {
  return static_cast<double>(word) * 0x1p-32 < density;
}

// The Philox stream of input k's drop mask: one block serves inputs 4 * (k / 4) .. + 3, word k % 4 each.
WAVG_HD inline std::uint64_t mask_stream(std::uint64_t stream, std::uint64_t k) { return stream + ((k / 4) << 32); }

// TIES's sign election: whether the weighted entry wt has the sign elected by the sum of all (mergekit's majority
// sign: + when the sum is >= 0); an entry of sign 0 or NaN never agrees.
WAVG_HD inline bool agrees_with(double wt, double total) { return total >= 0 ? wt > 0 : wt < 0; }

// Input k's task-vector entry u at element `index` after sparsification (TaskCombineParams); `word` is its Philox
// word when the sparsification is random.
WAVG_HD inline double sparsified(const TaskCombineParams& p, std::size_t k, double u, std::uint64_t index,
                                 std::uint32_t word) {
  if (p.sparsify == Sparsify::magnitude) {
    if (!ranks_at_or_above(u, p.threshold[k], index, p.tie_last[k])) return 0.0;
    if (p.drop_threshold && ranks_at_or_above(u, p.drop_threshold[k], index, p.drop_tie_last[k])) return 0.0;
    return u;
  }
  if (p.sparsify == Sparsify::random) {
    const double density = p.densities ? p.densities[k] : p.density;
    if (!kept_at_random(word, density)) return 0.0;
    return p.scale ? u * p.scale[k] : u / density;
  }
  return u;
}

}  // namespace wavg
