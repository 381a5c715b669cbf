// Times the assignment solver of weight matching (src/align/lap.cpp) and its score products (src/align/gemm.cpp):
// the README's figures for a 4096 x 4096 assignment and a 4096^3 product. Built with the tests as wavg_lap_bench;
// not a test (timings belong to benchmarks, not CI). Usage: wavg_lap_bench [N ...] (default 1024 2048 4096).
//
// Cases: i.i.d. Gaussian scores (no structure: the hardest case, what a first pass between unrelated networks is
// like) and a planted permutation (+6 on one entry per row) in the same Gaussian noise (what later passes
// see); the product A^T B of two n x n float matrices with every instruction set the CPU runs, fastest first (the
// one weight matching uses). CPU time is the process's (user + system), so it counts every thread.

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "align/gemm.hpp"
#include "align/lap.hpp"

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <class F>
void timed(const char* what, std::size_t n, F&& f) {
  const double cpu = cpu_seconds(), wall = wall_seconds();
  f();
  std::printf("%-32s n = %5zu: %7.3f s CPU, %7.3f s wall\n", what, n, cpu_seconds() - cpu, wall_seconds() - wall);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  if (sizes.empty()) sizes = {1024, 2048, 4096};
  for (std::size_t n : sizes) {
    std::mt19937_64 rng(n);
    std::normal_distribution<double> normal;
    std::vector<double> s(n * n);
    for (double& v : s) v = normal(rng);
    timed("LAP, Gaussian scores", n, [&] { wavg::align::solve_lap_max(s, n); });
    std::vector<std::uint32_t> hidden(n);
    std::iota(hidden.begin(), hidden.end(), 0u);
    std::shuffle(hidden.begin(), hidden.end(), rng);
    for (std::size_t i = 0; i < n; ++i) s[i * n + hidden[i]] += 6.0;
    std::vector<std::uint32_t> found;
    timed("LAP, planted permutation", n, [&] { found = wavg::align::solve_lap_max(s, n); });
    if (found != hidden) std::printf("  (planted permutation not recovered)\n");
    std::vector<float> a(n * n), b(n * n), out(n * n, 0.0f);
    std::normal_distribution<float> normal_f;
    for (float& v : a) v = normal_f(rng);
    for (float& v : b) v = normal_f(rng);
    for (wavg::align::Isa isa : wavg::align::runnable_isas()) {
      const std::string what = std::string("score product A^T B, ") + wavg::align::isa_name(isa);
      timed(what.c_str(), n, [&] { wavg::align::add_score_product(a.data(), b.data(), n, n, 1, out.data(), 0, isa); });
    }
  }
  return 0;
}
