#pragma once
// ggml's block-quantized types, decoded as llama.cpp's reference code does (ggml-quants.c dequantize_row_*, and
// the gguf Python package's quants.py, which gives the same bits) and encoded for the two the writer stores
// (quantize_row_q8_0_ref, quantize_row_q4_0_ref). Each block holds float16 scales (Q8_K: a float32 one) and small
// integers; a value is scale x integer (- min), computed in float. Every product there is exact in float (an 11-bit
// scale times integers of at most 13 bits), so the one rounding is the final subtraction or addition, and the
// decoded values are the reference's to the bit on any compiler (-ffp-contract=off besides).
//
// Block layouts (bytes in order; "d" a float16 scale, "nibble" 4 bits, low nibble first):
//   Q4_0  32 el. 18 B: d, qs[16]            x[j] = (lo(qs[j]) - 8) d, x[j+16] = (hi(qs[j]) - 8) d
//   Q4_1  32 el. 20 B: d, m, qs[16]         x[j] = lo(qs[j]) d + m, x[j+16] = hi(qs[j]) d + m
//   Q5_0  32 el. 22 B: d, qh u32, qs[16]    Q4_0's nibbles with bit j of qh as the fifth bit of x[j]; minus 16
//   Q5_1  32 el. 24 B: d, m, qh u32, qs[16] Q4_1's with the fifth bit
//   Q8_0  32 el. 34 B: d, qs[32] int8       x[j] = qs[j] d
//   Q2_K  256 el. 84 B: scales[16], qs[64], d, dmin   16 groups of 16; group scale byte: low nibble x d, high x dmin
//   Q3_K  256 el. 110 B: hmask[32], qs[64], scales[12] (16 six-bit scales, minus 32), d
//   Q4_K  256 el. 144 B: d, dmin, scales[12] (8 six-bit scales and mins), qs[128]
//   Q5_K  256 el. 176 B: d, dmin, scales[12], qh[32], qs[128]
//   Q6_K  256 el. 210 B: ql[128], qh[64], scales[16] int8, d
//   Q8_K  256 el. 292 B: d float32, qs[256] int8, bsums[16] int16 (sums, not needed to decode)
// The K-quants' element order is spelled out in gguf_blocks.cpp, one function per type.

#include <cstddef>
#include <cstdint>

#include "gguf/gguf.hpp"

namespace wavg::gguf {

// Decodes `n_blocks` consecutive blocks of quantized type `t` at `blocks` into n_blocks x t.block floats.
void decode_blocks(const TypeTraits& t, const unsigned char* blocks, std::uint64_t n_blocks, float* out);

// Encodes `n_blocks` x 32 floats as Q8_0 or Q4_0 blocks (t.type), as llama.cpp's reference quantizer does.
void encode_blocks(const TypeTraits& t, const float* values, std::uint64_t n_blocks, unsigned char* out);

}  // namespace wavg::gguf
