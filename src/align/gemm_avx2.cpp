// add_score_product for AVX2 + FMA (CMakeLists.txt compiles this file with -mavx2 -mfma); see gemm_kernel.inc.
#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#define Eigen wavg_eigen_avx2
#define WAVG_GEMM_NAMESPACE avx2
#include "align/gemm_kernel.inc"
#endif
