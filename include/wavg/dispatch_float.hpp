#pragma once
// Runs a template for a floating-point dtype: f.template operator()<T>() with T = t. The CPU kernels, the CUDA
// kernels' launchers and the methods that work per dtype share it; any other dtype reaching here is a caller's bug.

#include "wavg/dtype.hpp"
#include "wavg/error.hpp"

namespace wavg {

template <class F>
void dispatch_float(DType t, F&& f) {
  switch (t) {
    case DType::f16: return f.template operator()<DType::f16>();
    case DType::bf16: return f.template operator()<DType::bf16>();
    case DType::f32: return f.template operator()<DType::f32>();
    case DType::f64: return f.template operator()<DType::f64>();
    default: WAVG_ASSERT(!"dispatch_float: the dtype is not floating point");
  }
}

}  // namespace wavg
