// Picks add_score_product's instruction set once, from what the CPU supports (gemm.hpp).

#include "align/gemm.hpp"

#include "wavg/error.hpp"

#define WAVG_GEMM_NAMESPACE portable
#include "align/gemm_kernel.inc"

namespace wavg::align {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define WAVG_GEMM_DISPATCH 1
namespace avx2 {
void add_score_product(const float*, const float*, std::uint64_t, std::uint64_t, std::uint64_t, float*, int);
}
namespace avx512 {
void add_score_product(const float*, const float*, std::uint64_t, std::uint64_t, std::uint64_t, float*, int);
}
#endif

namespace {

using Product = void (*)(const float*, const float*, std::uint64_t, std::uint64_t, std::uint64_t, float*, int);

bool runs(Isa isa) {
#ifdef WAVG_GEMM_DISPATCH
  __builtin_cpu_init();
  if (isa == Isa::avx512)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
  if (isa == Isa::avx2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
  return isa == Isa::baseline;
}

Product product(Isa isa) {
  switch (isa) {
#ifdef WAVG_GEMM_DISPATCH
    case Isa::avx512: return avx512::add_score_product;
    case Isa::avx2: return avx2::add_score_product;
#endif
    default: return portable::add_score_product;
  }
}

Isa best() {
  static const Isa isa = runs(Isa::avx512) ? Isa::avx512 : runs(Isa::avx2) ? Isa::avx2 : Isa::baseline;
  return isa;
}

}  // namespace

void add_score_product(const float* a, const float* b, std::uint64_t pre, std::uint64_t n, std::uint64_t post, float* s,
                       int threads, Isa isa) {
  if (isa == Isa::best) isa = best();
  WAVG_ASSERT(runs(isa));
  product(isa)(a, b, pre, n, post, s, threads);
}

std::vector<Isa> runnable_isas() {
  std::vector<Isa> out{best()};
  for (Isa isa : {Isa::avx512, Isa::avx2, Isa::baseline})
    if (isa != best() && runs(isa)) out.push_back(isa);
  return out;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx512: return "avx512";
    case Isa::avx2: return "avx2";
    case Isa::baseline: return "baseline";
    default: return isa_name(best());
  }
}

}  // namespace wavg::align
