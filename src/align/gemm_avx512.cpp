// add_score_product for AVX-512 (CMakeLists.txt compiles this file with -mavx512f and friends); see gemm_kernel.inc.
#if defined(__x86_64__) && defined(__AVX512F__)
#define Eigen wavg_eigen_avx512
#define WAVG_GEMM_NAMESPACE avx512
#include "align/gemm_kernel.inc"
#endif
