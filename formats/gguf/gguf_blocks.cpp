// Decoding each block type as llama.cpp's reference does; the layouts are in gguf_blocks.hpp. Each decoder walks
// its block in the reference's own order (the K-quants in halves of 128 or groups of 64 elements), so reading one
// beside ggml-quants.c shows the same indices.

#include "gguf/gguf_blocks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "wavg/dtype.hpp"
#include "wavg/error.hpp"

namespace wavg::gguf {

namespace {

constexpr int k_qk = 32;    // elements of a Q4_0 .. Q8_0 block
constexpr int k_qk_k = 256; // elements of a K-quant super-block

float half(const unsigned char* p) {
  std::uint16_t bits;
  std::memcpy(&bits, p, 2);
  return static_cast<float>(half_to_double(bits));
}

std::uint16_t to_half(float v) { return double_to_half(static_cast<double>(v)); }

void q4_0(const unsigned char* b, float* y) {
  const float d = half(b);
  const unsigned char* qs = b + 2;
  for (int j = 0; j < k_qk / 2; ++j) {
    y[j] = static_cast<float>((qs[j] & 0x0f) - 8) * d;
    y[j + k_qk / 2] = static_cast<float>((qs[j] >> 4) - 8) * d;
  }
}

void q4_1(const unsigned char* b, float* y) {
  const float d = half(b), m = half(b + 2);
  const unsigned char* qs = b + 4;
  for (int j = 0; j < k_qk / 2; ++j) {
    y[j] = static_cast<float>(qs[j] & 0x0f) * d + m;
    y[j + k_qk / 2] = static_cast<float>(qs[j] >> 4) * d + m;
  }
}

std::uint32_t le32(const unsigned char* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}

void q5_0(const unsigned char* b, float* y) {
  const float d = half(b);
  const std::uint32_t qh = le32(b + 2);
  const unsigned char* qs = b + 6;
  for (int j = 0; j < k_qk / 2; ++j) {
    const int hi0 = ((qh >> j) & 1) << 4, hi1 = ((qh >> (j + 16)) & 1) << 4;
    y[j] = static_cast<float>(((qs[j] & 0x0f) | hi0) - 16) * d;
    y[j + k_qk / 2] = static_cast<float>(((qs[j] >> 4) | hi1) - 16) * d;
  }
}

void q5_1(const unsigned char* b, float* y) {
  const float d = half(b), m = half(b + 2);
  const std::uint32_t qh = le32(b + 4);
  const unsigned char* qs = b + 8;
  for (int j = 0; j < k_qk / 2; ++j) {
    const int hi0 = ((qh >> j) & 1) << 4, hi1 = ((qh >> (j + 16)) & 1) << 4;
    y[j] = static_cast<float>((qs[j] & 0x0f) | hi0) * d + m;
    y[j + k_qk / 2] = static_cast<float>((qs[j] >> 4) | hi1) * d + m;
  }
}

void q8_0(const unsigned char* b, float* y) {
  const float d = half(b);
  for (int j = 0; j < k_qk; ++j) y[j] = static_cast<float>(static_cast<std::int8_t>(b[2 + j])) * d;
}

// scales[16], qs[64], d, dmin. Each half of 128 elements takes 32 bytes of qs, 2 bits at a time (shift 0, 2, 4, 6),
// 16 elements from bytes 0..15 and 16 from bytes 16..31 per shift, each 16 with a scale byte of its own.
void q2_k(const unsigned char* b, float* y) {
  const unsigned char* scales = b;
  const unsigned char* q = b + 16;
  const float d = half(b + 80), dmin = half(b + 82);
  int is = 0;
  for (int n = 0; n < k_qk_k; n += 128, q += 32)
    for (int shift = 0; shift < 8; shift += 2)
      for (int part = 0; part < 2; ++part) {
        const unsigned char sc = scales[is++];
        const float dl = d * static_cast<float>(sc & 0x0f), ml = dmin * static_cast<float>(sc >> 4);
        for (int l = 0; l < 16; ++l) *y++ = dl * static_cast<float>((q[l + 16 * part] >> shift) & 3) - ml;
      }
}

// hmask[32], qs[64], scales[12], d. Like Q2_K's walk; a third bit comes from hmask[l], bit (4 x half + shift / 2),
// and subtracts 4 when clear. The 16 scales are six bits: the low four from bytes 0..7 (low nibbles first), the
// high two from bytes 8..11, two bits per scale (scale k: byte 8 + k % 4, bits 2 (k / 4)).
void q3_k(const unsigned char* b, float* y) {
  const unsigned char* hm = b;
  const unsigned char* q = b + 32;
  const unsigned char* packed = b + 96;
  const float d_all = half(b + 108);
  int scale[16];
  for (int k = 0; k < 16; ++k) {
    const int low = k < 8 ? packed[k] & 0x0f : packed[k - 8] >> 4;
    const int high = (packed[8 + k % 4] >> (2 * (k / 4))) & 3;
    scale[k] = (low | high << 4) - 32;
  }
  int is = 0;
  unsigned m = 1;
  for (int n = 0; n < k_qk_k; n += 128, q += 32)
    for (int shift = 0; shift < 8; shift += 2, m <<= 1)
      for (int part = 0; part < 2; ++part) {
        const float dl = d_all * static_cast<float>(scale[is++]);
        for (int l = 16 * part; l < 16 * part + 16; ++l)
          *y++ = dl * static_cast<float>(((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4));
      }
}

// The K-quants' 8 six-bit scales and mins in 12 bytes (get_scale_min_k4): j < 4 in the low six bits of bytes j
// and j + 4; j >= 4 in the nibbles of byte j + 4 with the top two bits of bytes j - 4 and j.
void scale_min_k4(int j, const unsigned char* q, int& sc, int& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// d, dmin, scales[12], then Q5_K's qh[32], then qs[128]: four groups of 64 elements, each 32 bytes of qs (low
// nibbles, then high) with two scale/min pairs; Q5_K's fifth bit of element l of part p of group g is bit 2g + p
// of qh[l] (null for Q4_K).
void k_quant_4_5(const unsigned char* b, const unsigned char* qh, const unsigned char* q, float* y) {
  const float d = half(b), dmin = half(b + 2);
  const unsigned char* scales = b + 4;
  for (int g = 0; g < 4; ++g, q += 32)
    for (int part = 0; part < 2; ++part) {
      int sc, m;
      scale_min_k4(2 * g + part, scales, sc, m);
      const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
      const int bit = 2 * g + part;
      for (int l = 0; l < 32; ++l) {
        const int v = (part ? q[l] >> 4 : q[l] & 0x0f) + (qh && ((qh[l] >> bit) & 1) ? 16 : 0);
        *y++ = d1 * static_cast<float>(v) - m1;
      }
    }
}

void q4_k(const unsigned char* b, float* y) { k_quant_4_5(b, nullptr, b + 16, y); }
void q5_k(const unsigned char* b, float* y) { k_quant_4_5(b, b + 16, b + 48, y); }

// ql[128], qh[64], scales[16] int8, d: each half of 128 elements takes 64 bytes of ql and 32 of qh; element l of
// its four quarters: ql[l] low, ql[l + 32] low, ql[l] high, ql[l + 32] high, with 2 bits of qh[l] each (shift 0, 2,
// 4, 6), minus 32, times d x the scale of its 16.
void q6_k(const unsigned char* b, float* y) {
  const unsigned char* ql = b;
  const unsigned char* qh = b + 128;
  const auto* sc = reinterpret_cast<const signed char*>(b + 192);
  const float d = half(b + 208);
  for (int n = 0; n < k_qk_k; n += 128, y += 128, ql += 64, qh += 32, sc += 8)
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0x0f) | ((qh[l] >> 0) & 3) << 4) - 32;
      const int q2 = ((ql[l + 32] & 0x0f) | ((qh[l] >> 2) & 3) << 4) - 32;
      const int q3 = ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32;
      const int q4 = ((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32;
      y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
      y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
      y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
      y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
    }
}

void q8_k(const unsigned char* b, float* y) {
  float d;
  std::memcpy(&d, b, 4);
  for (int j = 0; j < k_qk_k; ++j) y[j] = d * static_cast<float>(static_cast<std::int8_t>(b[4 + j]));
}

// Runs fn(i) for each block i < n, in pieces of k_piece_blocks blocks spread over the OpenMP threads: each block is
// decoded or encoded alone, so the bytes are the same for any thread count. A piece of 1,024 blocks (32 Ki or
// 256 Ki elements) is work enough to pay for a thread's wake-up; an engine block of 64 MiB holds hundreds.
constexpr std::uint64_t k_piece_blocks = 1024;

template <class Fn>
void for_pieces(std::uint64_t n, Fn&& fn) {
  const auto pieces = static_cast<std::int64_t>((n + k_piece_blocks - 1) / k_piece_blocks);
#pragma omp parallel for schedule(static) if (pieces > 1)
  for (std::int64_t p = 0; p < pieces; ++p) {
    const std::uint64_t end = std::min(n, static_cast<std::uint64_t>(p + 1) * k_piece_blocks);
    for (std::uint64_t i = static_cast<std::uint64_t>(p) * k_piece_blocks; i < end; ++i) fn(i);
  }
}

// Rounds half away from zero, as roundf, for |v| < 2^31: the conversion truncates v + 0.5 (- 0.5 below zero), a sum
// that double holds exactly wherever an integer is near it; unlike a call to roundf the loop over a block vectorises.
int round_away(float v) { return static_cast<int>(static_cast<double>(v) + (v < 0.0f ? -0.5 : 0.5)); }

// quantize_row_q8_0_ref: the scale maps the largest magnitude to 127; values rounded half away from zero.
void encode_q8_0(const float* x, unsigned char* out) {
  float amax = 0.0f;
  for (int j = 0; j < k_qk; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  const std::uint16_t dh = to_half(d);
  std::memcpy(out, &dh, 2);
  for (int j = 0; j < k_qk; ++j) out[2 + j] = static_cast<unsigned char>(static_cast<std::int8_t>(round_away(x[j] * id)));
}

// quantize_row_q4_0_ref: the scale maps the value of largest magnitude (the first such, sign kept) to -8; values
// shifted by 8.5 and truncated, at most 15.
void encode_q4_0(const float* x, unsigned char* out) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < k_qk; ++j)
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  const float d = max / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  const std::uint16_t dh = to_half(d);
  std::memcpy(out, &dh, 2);
  for (int j = 0; j < k_qk / 2; ++j) {
    const float x0 = x[j] * id, x1 = x[k_qk / 2 + j] * id;
    const int q0 = std::min(15, static_cast<int>(static_cast<std::int8_t>(x0 + 8.5f)));
    const int q1 = std::min(15, static_cast<int>(static_cast<std::int8_t>(x1 + 8.5f)));
    out[2 + j] = static_cast<unsigned char>(q0 | q1 << 4);
  }
}

}  // namespace

void decode_blocks(const TypeTraits& t, const unsigned char* blocks, std::uint64_t n_blocks, float* out) {
  void (*decode)(const unsigned char*, float*) = nullptr;
  switch (t.type) {
    case GgmlType::q4_0: decode = q4_0; break;
    case GgmlType::q4_1: decode = q4_1; break;
    case GgmlType::q5_0: decode = q5_0; break;
    case GgmlType::q5_1: decode = q5_1; break;
    case GgmlType::q8_0: decode = q8_0; break;
    case GgmlType::q2_k: decode = q2_k; break;
    case GgmlType::q3_k: decode = q3_k; break;
    case GgmlType::q4_k: decode = q4_k; break;
    case GgmlType::q5_k: decode = q5_k; break;
    case GgmlType::q6_k: decode = q6_k; break;
    case GgmlType::q8_k: decode = q8_k; break;
    default: WAVG_ASSERT(!"decode_blocks: not a quantized type");
  }
  for_pieces(n_blocks, [&](std::uint64_t i) { decode(blocks + i * t.bytes, out + i * t.block); });
}

void encode_blocks(const TypeTraits& t, const float* values, std::uint64_t n_blocks, unsigned char* out) {
  WAVG_ASSERT(t.type == GgmlType::q8_0 || t.type == GgmlType::q4_0);
  const auto encode = t.type == GgmlType::q8_0 ? encode_q8_0 : encode_q4_0;
  for_pieces(n_blocks, [&](std::uint64_t i) { encode(values + i * k_qk, out + i * t.bytes); });
}

}  // namespace wavg::gguf
