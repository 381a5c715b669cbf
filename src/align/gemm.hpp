#pragma once
// The products behind weight matching's scores (weight_matching.cpp), where nearly all of its time goes. Eigen's
// GEMM is compiled once per instruction set (SSE2, AVX2 + FMA, AVX-512) and the best one the CPU runs is picked
// at run time, as the merge kernels are: the portable build targets SSE2 only, which runs Eigen's float GEMM at
// about a third of an AVX2 core's speed.

#include <cstdint>
#include <vector>

namespace wavg::align {

// The instruction sets add_score_product is built for; `best` is the fastest this CPU runs.
enum class Isa { best, baseline, avx2, avx512 };

// Adds to s (n x n floats, row-major) the sum over k < pre of A_k B_k^T, where A_k and B_k are the k-th row-major
// n x post blocks of a and b (pre * n * post floats each): with post = 1, A^T B for a and b of pre x n. Runs on
// `threads` OpenMP threads (0: all of them), with the instructions of `isa` (tests and benchmarks pick one).
void add_score_product(const float* a, const float* b, std::uint64_t pre, std::uint64_t n, std::uint64_t post, float* s,
                       int threads, Isa isa = Isa::best);

// Lists the instruction sets this CPU and build can run, `best` first (as its own name: "avx512", "avx2" or
// "baseline", the build's own flags).
std::vector<Isa> runnable_isas();
// Names an instruction set.
const char* isa_name(Isa isa);

}  // namespace wavg::align
