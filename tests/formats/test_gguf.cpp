// GGUF: every block type decoded against blocks packed here from chosen scales and integers (the layouts of the
// gguf Python package's quants.py, read as numpy reshapes: element e's bits found by index arithmetic, not by
// the reference's loops), so each expected value is a closed form; the Q8_0 and Q4_0 encoders against blocks whose
// values they must reproduce exactly; files built byte by byte for the reader, and its corrupt cases.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <vector>

#include "gguf/gguf.hpp"
#include "gguf/gguf_blocks.hpp"
#include "support/open_error.hpp"
#include "support/temp_dir.hpp"
#include "wavg/dtype.hpp"
#include "wavg/error.hpp"
#include "wavg/provenance.hpp"

using namespace wavg;
using namespace wavg::gguf;
using wavg::test::TempDir;

namespace {

using Block = std::vector<unsigned char>;

void put16(Block& b, std::size_t at, std::uint16_t v) {
  b[at] = static_cast<unsigned char>(v);
  b[at + 1] = static_cast<unsigned char>(v >> 8);
}

// float16 bit patterns and their values: 0x3555 = 0.333251953125 (all ten mantissa bits used), 0xb400 = -0.25.
constexpr std::uint16_t k_d = 0x3555, k_m = 0xb400;
const double d_value = 0.333251953125, m_value = -0.25;

// Decodes one block of `type` and checks element e against expected(e), computed in double (every product is
// exact) and rounded once to float, as the reference's single rounding of its sum.
void check_block(GgmlType type, const Block& b, const std::function<double(int)>& expected) {
  const TypeTraits& t = type_traits(type);
  REQUIRE(b.size() == t.bytes);
  std::vector<float> out(t.block);
  decode_blocks(t, b.data(), 1, out.data());
  for (int e = 0; e < static_cast<int>(t.block); ++e) {
    CAPTURE(e);
    CHECK(out[static_cast<std::size_t>(e)] == static_cast<float>(expected(e)));
  }
}

int nibble_q(int e) { return (e * 7 + 3) % 16; }  // a 4-bit integer per element, every value used

}  // namespace

TEST_CASE("gguf Q4_0, Q4_1: element j < 16 in the low nibble of byte j, element j + 16 in its high nibble") {
  Block b0(18), b1(20);
  put16(b0, 0, k_d);
  put16(b1, 0, k_d);
  put16(b1, 2, k_m);
  for (int e = 0; e < 32; ++e) {
    b0[2 + e % 16] |= static_cast<unsigned char>(nibble_q(e) << (e < 16 ? 0 : 4));
    b1[4 + e % 16] |= static_cast<unsigned char>(nibble_q(e) << (e < 16 ? 0 : 4));
  }
  check_block(GgmlType::q4_0, b0, [](int e) { return (nibble_q(e) - 8) * d_value; });
  check_block(GgmlType::q4_1, b1, [](int e) { return nibble_q(e) * d_value + m_value; });
}

TEST_CASE("gguf Q5_0, Q5_1: Q4's nibbles with bit e of the u32 qh as the fifth bit of element e") {
  const auto q5 = [](int e) { return (e * 11 + 5) % 32; };
  Block b0(22), b1(24);
  put16(b0, 0, k_d);
  put16(b1, 0, k_d);
  put16(b1, 2, k_m);
  for (int e = 0; e < 32; ++e) {
    const int low = q5(e) & 15, high = q5(e) >> 4;
    b0[6 + e % 16] |= static_cast<unsigned char>(low << (e < 16 ? 0 : 4));
    b1[8 + e % 16] |= static_cast<unsigned char>(low << (e < 16 ? 0 : 4));
    b0[2 + e / 8] |= static_cast<unsigned char>(high << (e % 8));
    b1[4 + e / 8] |= static_cast<unsigned char>(high << (e % 8));
  }
  check_block(GgmlType::q5_0, b0, [&](int e) { return (q5(e) - 16) * d_value; });
  check_block(GgmlType::q5_1, b1, [&](int e) { return q5(e) * d_value + m_value; });
}

TEST_CASE("gguf Q8_0: a float16 scale and 32 int8") {
  Block b(34);
  put16(b, 0, k_d);
  for (int e = 0; e < 32; ++e) b[2 + e] = static_cast<unsigned char>(static_cast<std::int8_t>(e * 8 - 128));
  check_block(GgmlType::q8_0, b, [](int e) { return (e * 8 - 128) * d_value; });
}

TEST_CASE("gguf Q8_K: a float32 scale and 256 int8") {
  Block b(292);
  const float d = 1.0f / 3.0f;
  std::memcpy(b.data(), &d, 4);
  for (int e = 0; e < 256; ++e) b[4 + e] = static_cast<unsigned char>(e);
  check_block(GgmlType::q8_k, b, [&](int e) { return static_cast<double>(d) * static_cast<std::int8_t>(e); });
}

TEST_CASE("gguf Q2_K: 16 groups of 16, each with a 4-bit scale and min; 2 bits per element") {
  // Element e = 128 h + 32 s + l takes bits 2s of qs[32 h + l]; group e / 16 its scale byte.
  const auto q = [](int e) { return (e * 5 + e / 7) % 4; };
  const auto sc = [](int g) { return (g * 3 + 1) % 16; };
  const auto mn = [](int g) { return (g * 7 + 2) % 16; };
  Block b(84);
  for (int g = 0; g < 16; ++g) b[g] = static_cast<unsigned char>(sc(g) | mn(g) << 4);
  for (int e = 0; e < 256; ++e) b[16 + 32 * (e / 128) + e % 32] |= static_cast<unsigned char>(q(e) << (2 * (e % 128 / 32)));
  put16(b, 80, k_d);
  put16(b, 82, 0x3c00);  // dmin 1.0
  check_block(GgmlType::q2_k, b, [&](int e) { return d_value * sc(e / 16) * q(e) - 1.0 * mn(e / 16); });
}

TEST_CASE("gguf Q3_K: 2 low bits, a high bit that subtracts 4 when clear, 16 six-bit scales minus 32") {
  const auto q = [](int e) { return (e * 3 + e / 5) % 8 - 4; };  // -4 .. 3
  const auto scale = [](int g) { return g * 4 - 32 + g % 3; };     // -32 .. 30
  Block b(110);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, s = e % 128 / 32, l = e % 32;
    const int high = q(e) >= 0 ? 1 : 0, low = q(e) + (high ? 0 : 4);
    b[32 + 32 * h + l] |= static_cast<unsigned char>(low << (2 * s));
    b[l] |= static_cast<unsigned char>(high << (4 * h + s));
  }
  // The scales, stored plus 32: low nibbles in bytes 0..7 (scales 0..7, then 8..15 in the high nibbles), the top
  // two bits in bytes 8..11 (scale k: byte 8 + k % 4, bits 2 (k / 4)).
  for (int k = 0; k < 16; ++k) {
    const int stored = scale(k) + 32;
    b[96 + k % 8] |= static_cast<unsigned char>((stored & 15) << (k < 8 ? 0 : 4));
    b[96 + 8 + k % 4] |= static_cast<unsigned char>((stored >> 4) << (2 * (k / 4)));
  }
  put16(b, 108, k_d);
  check_block(GgmlType::q3_k, b, [&](int e) { return d_value * scale(e / 16) * q(e); });
}

namespace {

// The K-quants' eight 6-bit scales and mins in 12 bytes (quants.py's diagram): bytes 0..3 scales 0..3 with the top
// bits of scales 4..7 above them, bytes 4..7 the same for mins, bytes 8..11 the low nibbles of scale and min 4..7.
void pack_k4(Block& b, std::size_t at, const std::function<int(int)>& sc, const std::function<int(int)>& mn) {
  for (int j = 0; j < 4; ++j) {
    b[at + j] = static_cast<unsigned char>(sc(j) | (sc(j + 4) >> 4) << 6);
    b[at + 4 + j] = static_cast<unsigned char>(mn(j) | (mn(j + 4) >> 4) << 6);
    b[at + 8 + j] = static_cast<unsigned char>((sc(j + 4) & 15) | (mn(j + 4) & 15) << 4);
  }
}

}  // namespace

TEST_CASE("gguf Q4_K, Q5_K: 8 groups of 32 with six-bit scales and mins; nibbles of 4 x 32 bytes") {
  const auto sc = [](int j) { return (j * 9 + 60) % 64; };
  const auto mn = [](int j) { return (j * 13 + 7) % 64; };
  const auto q5 = [](int e) { return (e * 7 + e / 9) % 32; };
  Block b4(144), b5(176);
  put16(b4, 0, k_d);
  put16(b4, 2, 0x3800);  // dmin 0.5
  put16(b5, 0, k_d);
  put16(b5, 2, 0x3800);
  pack_k4(b4, 4, sc, mn);
  pack_k4(b5, 4, sc, mn);
  for (int e = 0; e < 256; ++e) {
    // Element e = 64 g + 32 hi + l: nibble hi of qs[32 g + l]; Q5_K's fifth bit is bit e / 32 of qh[l].
    const int g = e / 64, hi = e % 64 / 32, l = e % 32;
    b4[16 + 32 * g + l] |= static_cast<unsigned char>(nibble_q(e) << (4 * hi));
    b5[48 + 32 * g + l] |= static_cast<unsigned char>((q5(e) & 15) << (4 * hi));
    b5[16 + l] |= static_cast<unsigned char>((q5(e) >> 4) << (e / 32));
  }
  check_block(GgmlType::q4_k, b4, [&](int e) { return d_value * sc(e / 32) * nibble_q(e) - 0.5 * mn(e / 32); });
  check_block(GgmlType::q5_k, b5, [&](int e) { return d_value * sc(e / 32) * q5(e) - 0.5 * mn(e / 32); });
}

TEST_CASE("gguf Q6_K: 4 low bits in ql, 2 high in qh, minus 32, times an int8 scale per 16") {
  const auto q = [](int e) { return (e * 13 + e / 3) % 64 - 32; };
  const auto sc = [](int g) { return g * 17 - 128; };  // -128 .. 127
  Block b(210);
  for (int e = 0; e < 256; ++e) {
    // Element e = 128 h + 32 k + l: nibble k / 2 of ql[64 h + 32 (k % 2) + l], bits 2k of qh[32 h + l].
    const int h = e / 128, k = e % 128 / 32, l = e % 32, u = q(e) + 32;
    b[64 * h + 32 * (k % 2) + l] |= static_cast<unsigned char>((u & 15) << (4 * (k / 2)));
    b[128 + 32 * h + l] |= static_cast<unsigned char>((u >> 4) << (2 * k));
  }
  for (int g = 0; g < 16; ++g) b[192 + g] = static_cast<unsigned char>(static_cast<std::int8_t>(sc(g)));
  put16(b, 208, k_d);
  check_block(GgmlType::q6_k, b, [&](int e) { return d_value * sc(e / 16) * q(e); });
}

TEST_CASE("gguf Q8_0 and Q4_0 encoders give back blocks whose values they hold exactly") {
  // Q8_0: the largest magnitude, 63.5, maps to 127, so d = 0.5 (float16 0x3800) and each value x / 0.5.
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>((j * 9 % 255) - 127) * 0.5f;
  x[5] = -63.5f;
  Block out(34);
  encode_blocks(type_traits(GgmlType::q8_0), x.data(), 1, out.data());
  CHECK((out[0] | out[1] << 8) == 0x3800);
  for (int j = 0; j < 32; ++j) CHECK(static_cast<std::int8_t>(out[2 + j]) == static_cast<int>(x[j] * 2));
  // Q4_0: the value of largest magnitude, -2, maps to -8: d = 0.25 (0x3400), each nibble x / 0.25 + 8.
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(nibble_q(j) - 8) * 0.25f;
  x[0] = -2.0f;
  Block q4(18);
  encode_blocks(type_traits(GgmlType::q4_0), x.data(), 1, q4.data());
  CHECK((q4[0] | q4[1] << 8) == 0x3400);
  for (int j = 0; j < 32; ++j) CHECK(((q4[2 + j % 16] >> (j < 16 ? 0 : 4)) & 15) == static_cast<int>(x[j] * 4 + 8));
  // An all-zero block: scale 0, integers 0 (Q4_0: scale -0, as the reference divides 0 by -8; nibbles 8, the
  // zero point).
  std::vector<float> zero(32, 0.0f);
  encode_blocks(type_traits(GgmlType::q8_0), zero.data(), 1, out.data());
  CHECK(std::all_of(out.begin(), out.end(), [](unsigned char c) { return c == 0; }));
  encode_blocks(type_traits(GgmlType::q4_0), zero.data(), 1, q4.data());
  CHECK(q4[0] == 0x00);
  CHECK(q4[1] == 0x80);
  CHECK(q4[2] == 0x88);
}

// ---- the reader ----

namespace {

// Bytes of a GGUF file, appended field by field.
struct GgufBytes {
  std::string s;
  GgufBytes& u32(std::uint32_t v) {
    s.append(reinterpret_cast<const char*>(&v), 4);
    return *this;
  }
  GgufBytes& u64(std::uint64_t v) {
    s.append(reinterpret_cast<const char*>(&v), 8);
    return *this;
  }
  GgufBytes& str(const std::string& v) {
    u64(v.size());
    s += v;
    return *this;
  }
  GgufBytes& pad(std::size_t to) {
    s.append((to - s.size() % to) % to, '\0');
    return *this;
  }
};

// A small v3 file: keys general.architecture (string "llama"), general.alignment (u32 64), tokens (array of 5
// strings), and two tensors: "w" Q8_0 with ne = (32, 2) (shape (2, 32)) at offset 0, "b" F32 ne = (3,) at 128.
std::string small_file(std::uint32_t alignment = 64) {
  GgufBytes f;
  f.s = "GGUF";
  f.u32(3).u64(2).u64(3);
  f.str("general.architecture").u32(8).str("llama");
  f.str("general.alignment").u32(4).u32(alignment);
  f.str("tokens").u32(9).u32(8).u64(5).str("<s>").str("</s>").str("a").str("b").str("c");
  f.str("w").u32(2).u64(32).u64(2).u32(8).u64(0);
  f.str("b").u32(1).u64(3).u32(0).u64(128);
  f.pad(alignment);
  for (int blk = 0; blk < 2; ++blk) {
    f.s += static_cast<char>(0x00);
    f.s += static_cast<char>(0x38);  // d = 0.5
    for (int j = 0; j < 32; ++j) f.s += static_cast<char>(j - 16 + blk);
  }
  f.s.append(128 - 68, '\0');
  const float b[3] = {1.5f, -2.0f, 0.25f};
  f.s.append(reinterpret_cast<const char*>(b), 12);
  return f.s;
}

std::string open_error(const std::string& bytes) { return test::open_error<GgufReader>("x.gguf", bytes); }

}  // namespace

TEST_CASE("gguf reader lists tensors in numpy's shape order, quantized ones as float32, and keeps the metadata") {
  TempDir dir;
  const std::string path = dir.write("m.gguf", small_file());
  REQUIRE(looks_like_gguf(path));
  GgufReader r(path);
  CHECK(r.version() == 3);
  CHECK(r.alignment() == 64);
  REQUIRE(r.tensors().size() == 2);
  CHECK(r.tensors()[0].name == "w");
  CHECK(r.tensors()[0].shape == Shape{2, 32});
  CHECK(r.tensors()[0].dtype == DType::f32);
  CHECK(r.tensors()[0].stored_as == "Q8_0");
  CHECK(r.tensors()[0].role == Role::weight);
  CHECK(r.tensors()[1].shape == Shape{3});
  CHECK(r.tensors()[1].stored_as.empty());
  CHECK(r.layout() == "GGUF v3, llama, 1 F32, 1 Q8_0");
  const auto meta = r.metadata();
  CHECK(meta.at("general.architecture") == "llama");
  CHECK(meta.at("general.alignment") == "u32 64");
  CHECK(meta.at("tokens") == "array of 5 string: <s>, </s>, a, b, ...");
  float w[64];
  r.read(0, 0, 64, w);
  for (int j = 0; j < 64; ++j) CHECK(w[j] == static_cast<float>(j % 32 - 16 + j / 32) * 0.5f);
  r.read(0, 30, 5, w);  // across the two blocks
  CHECK(w[0] == 7.0f);
  CHECK(w[2] == -7.5f);
  CHECK(w[4] == -6.5f);
  CHECK(r.view(0, 0, 32) == nullptr);
  const void* v = r.view(1, 0, 3);
  REQUIRE(v);
  float b[3];
  std::memcpy(b, v, 12);
  CHECK(b[1] == -2.0f);
}

TEST_CASE("gguf reader refuses every prefix of a file, and what would make it read out of bounds") {
  const std::string good = small_file();
  // Every truncation is a message, never a crash; the header's end, past the tensor infos, too.
  for (std::size_t n = 0; n < good.size(); n += 7) {
    CAPTURE(n);
    if (n < 4) continue;  // not GGUF at all: the registry would not choose this reader
    CHECK(!open_error(good.substr(0, n)).empty());
  }
  const auto patched = [&](std::size_t at, std::uint64_t v, int bytes) {
    std::string s = good;
    for (int i = 0; i < bytes; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
    return s;
  };
  CHECK(open_error(patched(4, 1, 4)).find("version 1") != std::string::npos);
  CHECK(open_error(patched(4, 9, 4)).find("GGUF version 9 is not known") != std::string::npos);
  CHECK(open_error(patched(8, 1ull << 60, 8)).find("tensor count") != std::string::npos);
  CHECK(open_error(patched(16, 1ull << 60, 8)).find("key/value count") != std::string::npos);
  // The first key's length, past the end of the file.
  CHECK(open_error(patched(24, 1ull << 62, 8)).find("past the end of the file") != std::string::npos);
  const std::size_t align_value = good.find("general.alignment") + 17 + 4;
  CHECK(open_error(patched(align_value, 48, 4)) == "general.alignment 48 is not a power of two");
  CHECK(open_error(patched(align_value, 0, 4)) == "general.alignment 0 is not a power of two");
  const std::size_t array_len = good.find("tokens") + 6 + 8;
  CHECK(open_error(patched(array_len, 1ull << 61, 8)).find("array of 2305843009213693952 string runs past") !=
        std::string::npos);
  CHECK(open_error(patched(array_len - 4, 9, 4)) == "key tokens: an array of arrays, which GGUF readers refuse");
  const std::size_t w_info = good.find(std::string("\x01\0\0\0\0\0\0\0w", 9)) + 9;
  CHECK(open_error(patched(w_info, 5, 4)) == "w: 5 dimensions (GGUF tensors have 1 to 4)");
  CHECK(open_error(patched(w_info + 4, 31, 8)) == "w: rows of 31 elements are not whole Q8_0 blocks of 32");
  CHECK(open_error(patched(w_info + 12, 1ull << 62, 8)) == "w: shape (4611686018427387904, 32) overflows");
  CHECK(open_error(patched(w_info + 20, 99, 4)) == "w: ggml type 99 is not one wavg reads");
  CHECK(open_error(patched(w_info + 24, 32, 8)) == "w: offset 32 is not a multiple of the alignment (64)");
  CHECK(open_error(patched(w_info + 24, 1ull << 63, 8)).find("run past the end of the data section") !=
        std::string::npos);
  // llama.cpp's loader: tensors in order, each padded to the alignment; names of at most 63 bytes.
  CHECK(open_error(patched(w_info + 24, 64, 8)) ==
        "w: offset 64 where llama.cpp expects 0 (tensors lie in order, each padded to the alignment)");
  std::string long_name = good;
  long_name.replace(w_info - 9, 9, std::string("\x40\0\0\0\0\0\0\0", 8) + std::string(64, 'w'));
  CHECK(open_error(long_name) == "tensor 0's name is 64 bytes long; llama.cpp refuses names over 63");
  CHECK(open_error(good.substr(0, good.size() - 1)) ==
        "b: its 12 bytes at offset 128 run past the end of the data section (139 bytes)");
  GgufBytes twice;
  twice.s = "GGUF";
  twice.u32(3).u64(0).u64(2).str("k").u32(4).u32(1).str("k").u32(4).u32(2);
  CHECK(open_error(twice.s) == "GGUF key k appears twice");
}

// ---- the writer ----

namespace {

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

TEST_CASE("gguf writer lays out header, provenance, tensor infos and padded data as llama.cpp's writers do") {
  TempDir dir;
  OutputSpec spec;
  spec.tensors = {{"w", DType::f32, {2, 32}}, {"n", DType::f32, {3}}};
  spec.provenance = Provenance(std::map<std::string, std::string>{{"wavg_version", "9"}});
  spec.out_dtype_given = true;
  spec.block_type = "q8_0";
  const std::string path = dir.file("out.gguf");
  { std::ofstream(path, std::ios::binary); }
  // Each block's largest magnitude is 127 x 0.5, so d = 0.5 and the integers are the values doubled.
  const auto q = [](int j) { return j % 32 == 0 ? 127 : (j * 5 % 200) - 100; };
  std::vector<float> w(64);
  for (int j = 0; j < 64; ++j) w[j] = static_cast<float>(q(j)) * 0.5f;
  {
    auto writer = create_gguf_writer(path, "out.gguf", spec);
    // Pieces that end inside blocks, as the engine's blocks may (the writer carries the rest to the next piece),
    // and on a block's end, after which a whole block follows.
    writer->write(0, 0, 5, w.data());
    writer->write(0, 5, 27, w.data() + 5);
    writer->write(0, 32, 13, w.data() + 32);
    writer->write(0, 45, 19, w.data() + 45);
    const float n[3] = {1.5f, -2.0f, 0.25f};
    writer->write(1, 0, 3, n);
    writer->finish();
  }
  GgufBytes want;
  want.s = "GGUF";
  want.u32(3).u64(2).u64(2);                        // version 3, 2 tensors, 2 key/value pairs
  want.str("general.file_type").u32(4).u32(7);      // --out-dtype q8_0: LLAMA_FTYPE_MOSTLY_Q8_0, a u32
  want.str("wavg_version").u32(8).str("9");         // the provenance, a string
  want.str("w").u32(2).u64(32).u64(2).u32(8).u64(0);  // ne = (32, 2): shape reversed; Q8_0; offset 0
  want.str("n").u32(1).u64(3).u32(0).u64(96);         // a vector stays F32; 68 bytes of w padded to 96
  want.pad(32);
  for (int blk = 0; blk < 2; ++blk) {
    want.s += static_cast<char>(0x00);
    want.s += static_cast<char>(0x38);  // d = 0.5 as float16
    for (int j = 0; j < 32; ++j) want.s += static_cast<char>(q(32 * blk + j));
  }
  want.pad(32);
  const float n[3] = {1.5f, -2.0f, 0.25f};
  want.s.append(reinterpret_cast<const char*>(n), 12);
  want.pad(32);
  CHECK(read_all(path) == want.s);
}

TEST_CASE("gguf output_bytes sizes the output by its stored blocks, and refuses a K-quant before any value") {
  OutputSpec spec;
  spec.tensors = {{"w", DType::f32, {2, 32}}, {"n", DType::f32, {3}}};
  // Plain float32: 256 bytes of w, 12 of n padded to 32.
  CHECK(output_bytes(spec, "out.gguf") == 256 + 32);
  // Q8_0: w's 2 blocks of 34 bytes padded to 96, n (a vector) float32 as above; float32's count would be 3x more.
  spec.out_dtype_given = true;
  spec.block_type = "q8_0";
  CHECK(output_bytes(spec, "out.gguf") == 96 + 32);
  spec.block_type = "q4_0";  // 2 blocks of 18 bytes
  CHECK(output_bytes(spec, "out.gguf") == 64 + 32);
  // Input 1 storing w as Q4_K (ne0 = 256): kept without --out-dtype, which wavg cannot write.
  TempDir dir;
  GgufBytes f;
  f.s = "GGUF";
  f.u32(3).u64(1).u64(0);
  f.str("w").u32(2).u64(256).u64(1).u32(12).u64(0);
  f.pad(32);
  f.s.append(144, '\0');
  GgufReader input(dir.write("k.gguf", f.s));
  OutputSpec kept;
  kept.tensors = {{"w", DType::f32, {1, 256}}};
  kept.template_input = &input;
  CHECK_THROWS_WITH_AS(output_bytes(kept, "out.gguf"),
                       "out.gguf: input 1 stores tensors as types wavg does not write (1 Q4_K); give --out-dtype "
                       "float32, float16, bfloat16, q8_0 or q4_0",
                       Error);
  kept.out_dtype_given = true;
  kept.block_type = "q8_0";
  CHECK(output_bytes(kept, "out.gguf") == 288);  // 8 Q8_0 blocks of 34 bytes, padded to 32
}
