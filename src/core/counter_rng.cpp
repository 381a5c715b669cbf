#include "wavg/counter_rng.hpp"

#include <numeric>
#include <utility>

namespace wavg {

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint64_t hash_key(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d) {
  return mix64(mix64(mix64(mix64(a) ^ b) ^ c) ^ d);
}

std::vector<std::size_t> permutation(std::size_t n, std::uint64_t key) {
  std::vector<std::size_t> p(n);
  std::iota(p.begin(), p.end(), std::size_t{0});
  for (std::size_t i = n; i > 1; --i) {
    // The modulo bias is below i / 2^64: nothing for any n a CSV or a model can hold.
    const auto r = static_cast<std::size_t>(hash_key(key, i) % i);
    std::swap(p[i - 1], p[r]);
  }
  return p;
}

}  // namespace wavg
