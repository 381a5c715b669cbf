#pragma once
// Counter-based random numbers: normal deviates for the Gaussian mechanism (--noise-multiplier), uniform ones for
// DARE's drop mask. Philox4x32-10 (Salmon et al.,
// "Parallel random numbers: as easy as 1, 2, 3", SC 2011; the generator behind cuRAND and JAX) maps a 128-bit
// counter and a 64-bit key to 128 random bits with no state, so the deviate for one element depends only on
// (seed, tensor, element) and every backend, block size and thread count draws the same noise. It is header-only
// and free of std containers so a CUDA kernel can include it. It is not a cryptographic generator: see
// wavg-merge(1), DIFFERENTIAL PRIVACY.

#include <cmath>
#include <cstdint>

// Compiled for host and device alike when a .cu file includes this header.
#if defined(__CUDACC__)
#define WAVG_PHILOX_HD __host__ __device__
#else
#define WAVG_PHILOX_HD
#endif

namespace wavg {

struct Philox4x32 {
  std::uint32_t v[4];
};

// Philox4x32's round multipliers and key increments (the paper's constants; also used by the CPU backend's
// lane-by-lane version of the rounds, src/backends/cpu/cpu_task.cpp).
constexpr std::uint32_t k_philox_m0 = 0xD2511F53u, k_philox_m1 = 0xCD9E8D57u;
constexpr std::uint32_t k_philox_w0 = 0x9E3779B9u, k_philox_w1 = 0xBB67AE85u;

// Returns Philox4x32-10 of `counter` under `key` (two 32-bit key words).
WAVG_PHILOX_HD inline Philox4x32 philox4x32_10(Philox4x32 counter, std::uint32_t k0, std::uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += k_philox_w0;
      k1 += k_philox_w1;
    }
    const std::uint64_t p0 = std::uint64_t{k_philox_m0} * counter.v[0];
    const std::uint64_t p1 = std::uint64_t{k_philox_m1} * counter.v[2];
    counter = {{static_cast<std::uint32_t>(p1 >> 32) ^ counter.v[1] ^ k0, static_cast<std::uint32_t>(p1),
                static_cast<std::uint32_t>(p0 >> 32) ^ counter.v[3] ^ k1, static_cast<std::uint32_t>(p0)}};
  }
  return counter;
}

// Returns the Philox block for element `index` of stream `stream` under `seed`, counter (index, stream), key seed:
// four 32-bit words, which DARE's drop mask uses as four uniforms word / 2^32 (one block serves four inputs).
WAVG_PHILOX_HD inline Philox4x32 philox_block(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return philox4x32_10({{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32),
                         static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32)}},
                       static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

// Returns a standard normal deviate for element `index` of stream `stream` under `seed`: two 53-bit uniforms in
// (0, 1) from one Philox block, then the Box-Muller transform's cosine branch.
WAVG_PHILOX_HD inline double philox_normal(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  const Philox4x32 r = philox_block(seed, stream, index);
  const std::uint64_t a = ((std::uint64_t{r.v[0]} << 32) | r.v[1]) >> 11;
  const std::uint64_t b = ((std::uint64_t{r.v[2]} << 32) | r.v[3]) >> 11;
  const double u1 = (static_cast<double>(a) + 0.5) * 0x1p-53;
  const double u2 = (static_cast<double>(b) + 0.5) * 0x1p-53;
  constexpr double two_pi = 6.283185307179586476925286766559;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2);
}

}  // namespace wavg
