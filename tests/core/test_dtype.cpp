// float16 and bfloat16 rounding against bit patterns worked out by hand from IEEE 754, and float16 against the
// compiler's own _Float16 (GCC's libgcc conversions, correctly rounded) over every pattern and every tie.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "wavg/dtype.hpp"

using namespace wavg;

TEST_CASE("double_to_half rounds to nearest, ties to even") {
  CHECK(double_to_half(1.0) == 0x3c00);
  CHECK(double_to_half(-2.0) == 0xc000);
  CHECK(double_to_half(65504.0) == 0x7bff);                   // largest finite half
  CHECK(double_to_half(65519.99) == 0x7bff);                  // below the midpoint to 65536: stays finite
  CHECK(double_to_half(65520.0) == 0x7c00);                   // the midpoint rounds to even, which is infinity
  CHECK(double_to_half(1.0 + 1.0 / 2048) == 0x3c00);          // halfway between 1 and 1+2^-10: even is 1
  CHECK(double_to_half(1.0 + 3.0 / 2048) == 0x3c02);          // halfway between 1+2^-10 and 1+2^-9: even is 0x3c02
  CHECK(double_to_half(1.0 + 1.0 / 2048 + 1e-12) == 0x3c01);  // just above halfway rounds up
  CHECK(double_to_half(std::ldexp(1.0, -24)) == 0x0001);      // smallest subnormal
  CHECK(double_to_half(std::ldexp(1.0, -25)) == 0x0000);      // half of it: tie to even (zero)
  CHECK(double_to_half(std::ldexp(1.5, -25)) == 0x0001);
  CHECK(double_to_half(std::ldexp(1.0, -14)) == 0x0400);  // smallest normal
  CHECK(double_to_half(-0.0) == 0x8000);
  CHECK(double_to_half(std::numeric_limits<double>::infinity()) == 0x7c00);
  CHECK((double_to_half(std::numeric_limits<double>::quiet_NaN()) & 0x7e00) == 0x7e00);
}

TEST_CASE("double_to_half rounds once, not through float") {
  // 1 + 2^-11 + 2^-40 is just above the half tie; rounding to float first drops the 2^-40 and lands on the tie,
  // which would then round down to 1.0.
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  CHECK(double_to_half(x) == 0x3c01);
}

TEST_CASE("half and bfloat16 decode") {
  CHECK(half_to_double(0x3c00) == 1.0);
  CHECK(half_to_double(0x0001) == std::ldexp(1.0, -24));
  CHECK(half_to_double(0xfbff) == -65504.0);
  CHECK(std::isinf(half_to_double(0x7c00)));
  CHECK(std::isnan(half_to_double(0x7e00)));
  CHECK(bf16_to_double(0x3f80) == 1.0);
  CHECK(bf16_to_double(0xc040) == -3.0);
  CHECK(bf16_to_double(0x0001) == std::ldexp(1.0, -133));
}

TEST_CASE("double_to_bf16 rounds to nearest, ties to even") {
  CHECK(double_to_bf16(1.0) == 0x3f80);
  CHECK(double_to_bf16(1.0 + 1.0 / 256) == 0x3f80);  // tie: even
  CHECK(double_to_bf16(1.0 + 3.0 / 256) == 0x3f82);  // tie: even is up
  CHECK(double_to_bf16(3.0e38) == 0x7f62);
  CHECK(double_to_bf16(3.4e38) == 0x7f80);  // above the largest bf16 (3.39e38) midpoint: infinity
  CHECK(double_to_bf16(std::ldexp(1.0, -133)) == 0x0001);
}

TEST_CASE("dtype names round-trip") {
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i8, DType::i64, DType::u16, DType::boolean})
    CHECK(dtype_from_name(dtype_name(t)) == t);
  CHECK(dtype_from_name("f16") == DType::f16);
  CHECK(!dtype_from_name("complex64"));
}

#if defined(__FLT16_MAX__)
namespace {
std::uint16_t f16_bits(_Float16 h) {
  std::uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
_Float16 f16_of(std::uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return h;
}
}  // namespace

TEST_CASE("float16 widening and rounding agree with the compiler's _Float16 at every pattern and every tie") {
  for (std::uint32_t p = 0; p < 65536; ++p) {
    const auto b = static_cast<std::uint16_t>(p);
    const double want = static_cast<double>(f16_of(b));
    if (std::isnan(want)) {
      REQUIRE(std::isnan(half_to_double(b)));
      continue;
    }
    const double got = half_to_double(b);
    REQUIRE(std::memcmp(&want, &got, 8) == 0);
    REQUIRE(double_to_half(want) == b);
    if ((p & 0x7fff) < 0x7bff) {  // the tie between this finite value and the next one up in magnitude
      const double mid = (want + static_cast<double>(f16_of(static_cast<std::uint16_t>(p + 1)))) / 2;
      REQUIRE(double_to_half(mid) == f16_bits(static_cast<_Float16>(mid)));
    }
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t raw = rng();
    double v;
    std::memcpy(&v, &raw, 8);
    if (std::isnan(v)) continue;  // NaN payloads: wavg keeps the top bits, checked by hand above
    REQUIRE(double_to_half(v) == f16_bits(static_cast<_Float16>(v)));
  }
}
#endif
