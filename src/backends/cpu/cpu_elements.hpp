#pragma once
// Loading and storing one element of any floating-point dtype as double, for the CPU kernels. Templated on the
// dtype so the conversion is inlined into each kernel's loop.

#include <cstdint>

#include "wavg/dtype.hpp"
#include "wavg/error.hpp"

namespace wavg::cpu {

// Below this many elements a parallel region costs more than it saves.
constexpr std::uint64_t k_parallel_threshold = 1 << 15;

template <DType T> struct Storage;
template <> struct Storage<DType::f16> { using type = std::uint16_t; };
template <> struct Storage<DType::bf16> { using type = std::uint16_t; };
template <> struct Storage<DType::f32> { using type = float; };
template <> struct Storage<DType::f64> { using type = double; };

template <DType T> inline double load(const void* p, std::uint64_t i) {
  const auto v = static_cast<const typename Storage<T>::type*>(p)[i];
  if constexpr (T == DType::f16) return half_to_double(v);
  else if constexpr (T == DType::bf16) return bf16_to_double(v);
  else return static_cast<double>(v);
}

template <DType T> inline void store(void* p, std::uint64_t i, double v) {
  auto* out = static_cast<typename Storage<T>::type*>(p);
  if constexpr (T == DType::f16) out[i] = double_to_half(v);
  else if constexpr (T == DType::bf16) out[i] = double_to_bf16(v);
  else out[i] = static_cast<typename Storage<T>::type>(v);
}

// Calls f.template operator()<T>() for the floating-point dtype t.
template <class F> void dispatch_float(DType t, F&& f) {
  switch (t) {
    case DType::f16: return f.template operator()<DType::f16>();
    case DType::bf16: return f.template operator()<DType::bf16>();
    case DType::f32: return f.template operator()<DType::f32>();
    case DType::f64: return f.template operator()<DType::f64>();
    default: WAVG_ASSERT(!"kernel: dtype is not floating point");
  }
}

}  // namespace wavg::cpu
