#include "wavg/build_info.hpp"

#include <omp.h>

#if WAVG_HAVE_MPI
#include <mpi.h>
#endif

namespace wavg {

namespace {

std::string openmp_version() {
  // _OPENMP is the date of the specification the compiler implements.
  switch (_OPENMP) {
    case 201107: return "3.1";
    case 201307: return "4.0";
    case 201511: return "4.5";
    case 201811: return "5.0";
    case 202011: return "5.1";
    default: return std::to_string(_OPENMP);
  }
}

std::string simd_levels() {
  std::string s;
  const auto add = [&s](const char* name) { s += s.empty() ? name : std::string(" ") + name; };
#if defined(__SSE2__)
  add("sse2");
#endif
#if defined(__SSE4_2__)
  add("sse4.2");
#endif
#if defined(__AVX__)
  add("avx");
#endif
#if defined(__AVX2__)
  add("avx2");
#endif
#if defined(__FMA__)
  add("fma (not used for sums: -ffp-contract=off)");
#endif
#if defined(__AVX512F__)
  add("avx512f");
#endif
#if defined(__ARM_NEON)
  add("neon");
#endif
  return s.empty() ? "none" : s;
}

// The simd line: what the hot loops run here first, then the compile-time baseline. The CPU kernels are cloned for
// avx512f, avx2 and the baseline, and the loader picks the first this CPU supports (cpu_elements.hpp's
// WAVG_CLONES); the same test here says which one that is.
std::string simd_line() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  __builtin_cpu_init();
  const char* runs = __builtin_cpu_supports("avx512f") ? "avx512f" : __builtin_cpu_supports("avx2") ? "avx2" : nullptr;
  if (runs) return std::string(runs) + " (chosen at run time; compile-time baseline: " + simd_levels() + ")";
  return simd_levels() + " (chosen at run time: this CPU has neither avx512f nor avx2)";
#else
  return simd_levels() + " (compile-time; no run-time choice on this platform)";
#endif
}

}  // namespace

std::vector<std::pair<std::string, std::string>> build_features() {
  std::vector<std::pair<std::string, std::string>> f;
#if defined(WAVG_CUDA_ARCHITECTURES)
  f.emplace_back("cuda",
                 std::string("yes (CUDA ") + WAVG_CUDA_VERSION + ", architectures " + WAVG_CUDA_ARCHITECTURES + ")");
#else
  f.emplace_back("cuda", "no (built without CUDA)");
#endif
#if WAVG_HAVE_MPI
  int major = 0, minor = 0;
  MPI_Get_version(&major, &minor);
  char library[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(library, &length);
  std::string name(library, static_cast<std::size_t>(length));
  if (const auto comma = name.find(','); comma != std::string::npos) name.resize(comma);
  f.emplace_back("mpi", "yes (MPI " + std::to_string(major) + "." + std::to_string(minor) + ", " + name + ")");
#else
  f.emplace_back("mpi", "no (built without MPI)");
#endif
  f.emplace_back("openmp", "yes (OpenMP " + openmp_version() + ", " + std::to_string(omp_get_max_threads()) +
                               " threads by default here)");
  f.emplace_back("simd", simd_line());
  return f;
}

}  // namespace wavg
