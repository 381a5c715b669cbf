// MXNet NDArray lists: files built byte by byte here from the layout in formats/mxnet/mxnet.hpp (one array in each
// of the four encodings), the writer's output compared with an expected file annotated byte by byte, and a matrix
// of corrupt files.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>

#include "mxnet/mxnet.hpp"
#include "support/bytes.hpp"
#include "support/open_error.hpp"
#include "support/temp_dir.hpp"
#include "wavg/error.hpp"

using namespace wavg;
using wavg::test::TempDir;

namespace {

using test::f32_bytes;
using test::le_bytes;
std::string u32(std::uint32_t v) { return le_bytes(v); }
std::string i32(std::int32_t v) { return le_bytes(v); }
std::string u64(std::uint64_t v) { return le_bytes(v); }
std::string i64(std::int64_t v) { return le_bytes(v); }

const std::string k_cpu = i32(1) + i32(0);  // context: device type 1 (cpu), id 0
const std::string k_list = u64(0x112) + u64(0);

// A V2 float32 array of shape (2,) holding 1.5, -2.
const std::string k_v2_array = u32(0xF993FAC9) + i32(0) + i32(1) + i64(2) + k_cpu + i32(0) + f32_bytes({1.5f, -2.0f});

std::string names(std::initializer_list<std::string> list) {
  std::string s = u64(list.size());
  for (const auto& n : list) s += u64(n.size()) + n;
  return s;
}

std::string open_error(const std::string& bytes) { return test::open_error<MxnetReader>("x.params", bytes); }

}  // namespace

TEST_CASE("MXNet reader reads an array in each of the four encodings, with their names") {
  TempDir dir;
  const std::string bytes = k_list + u64(4) +
                            // V3: a float64 scalar (ndim 0 is a scalar in numpy semantics) 0.25
                            u32(0xF993FACA) + i32(0) + i32(0) + k_cpu + i32(1) + le_bytes(0.25) +
                            // V2: float32 (2,)
                            k_v2_array +
                            // V1: int64 (1, 2), on gpu 0 (device type 2): 7, -8
                            u32(0xF993FAC8) + i32(2) + i64(1) + i64(2) + i32(2) + i32(0) + i32(6) + i64(7) + i64(-8) +
                            // legacy: ndim 2 then uint32 dims (3, 1), uint8: 1, 2, 3
                            u32(2) + u32(3) + u32(1) + k_cpu + i32(3) + "\x01\x02\x03" +
                            names({"aux:s", "arg:w", "arg:i", "arg:u"});
  const std::string path = dir.write("m.params", bytes);
  REQUIRE(looks_like_mxnet(path));
  MxnetReader r(path);
  CHECK(r.layout() == "NDArray list, V3, V2, V1 and legacy arrays, Module arg:/aux: names");
  REQUIRE(r.tensors().size() == 4);
  CHECK(r.tensors()[0].name == "aux:s");
  CHECK(r.tensors()[0].dtype == DType::f64);
  CHECK(r.tensors()[0].shape.empty());
  CHECK(r.tensors()[1].shape == Shape{2});
  CHECK(r.tensors()[2].dtype == DType::i64);
  CHECK(r.tensors()[2].shape == Shape{1, 2});
  CHECK(r.tensors()[3].dtype == DType::u8);
  CHECK(r.tensors()[3].shape == Shape{3, 1});
  double s = 0;
  r.read(0, 0, 1, &s);
  CHECK(s == 0.25);
  float w[2];
  r.read(1, 0, 2, w);
  CHECK(w[0] == 1.5f);
  CHECK(w[1] == -2.0f);
  std::int64_t i[2];
  r.read(2, 0, 2, i);
  CHECK(i[1] == -8);
  unsigned char u[2];
  r.read(3, 1, 2, u);
  CHECK(u[0] == 2);
  CHECK(u[1] == 3);
  // The V2 data begin at byte 24 + 32 (the scalar) + 32 = 88, a multiple of 4: served from the mapping.
  const void* v = r.view(1, 0, 2);
  REQUIRE(v != nullptr);
  CHECK(std::memcmp(v, w, 8) == 0);
  // The int64 V1 data begin at byte 96 + 36 = 132, not a multiple of 8: lent as they lie all the same.
  const void* odd = r.view(2, 0, 2);
  REQUIRE(odd != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(odd) % 8 == 4);
  CHECK(std::memcmp(odd, i64(7).data(), 8) == 0);
  CHECK(std::memcmp(static_cast<const char*>(odd) + 8, i64(-8).data(), 8) == 0);
}

TEST_CASE("MXNet reader names a plain list's arrays by index and Gluon names as they are") {
  CHECK(open_error(k_list + u64(1) + k_v2_array + u64(0)).empty());
  TempDir dir;
  MxnetReader plain(dir.write("p.params", k_list + u64(1) + k_v2_array + u64(0)));
  CHECK(plain.tensors()[0].name == "0");
  CHECK(!plain.has_names());
  CHECK(plain.layout() == "NDArray list, V2 arrays, unnamed");
  MxnetReader gluon(dir.write("g.params", k_list + u64(1) + k_v2_array + names({"dense0_weight"})));
  CHECK(gluon.tensors()[0].name == "dense0_weight");
  CHECK(gluon.layout() == "NDArray list, V2 arrays, Gluon names");
}

TEST_CASE("MXNet writer writes V2 arrays on the CPU with the names in order") {
  TempDir dir;
  OutputSpec spec;
  spec.tensors = {{"arg:w", DType::f32, {2}}, {"aux:n", DType::i64, {1, 1}}};
  const std::string path = dir.file("out.params");
  { std::ofstream(path, std::ios::binary); }
  {
    auto w = create_mxnet_writer(path, "out.params", spec);
    const float wv[2] = {1.0f, 2.0f};
    const std::int64_t nv = -1;
    w->write(1, 0, 1, &nv);
    w->write(0, 1, 1, wv + 1);
    w->write(0, 0, 1, wv);
    w->finish();
  }
  const std::string expected =
      u64(0x112) + u64(0) + u64(2) +                                           // list magic, reserved, 2 arrays
      u32(0xF993FAC9) + i32(0) + i32(1) + i64(2) + i32(1) + i32(0) + i32(0) +  // V2 dense (2,) cpu float32
      f32_bytes({1.0f, 2.0f}) +                                                //   data
      u32(0xF993FAC9) + i32(0) + i32(2) + i64(1) + i64(1) + i32(1) + i32(0) + i32(6) +  // V2 (1, 1) cpu int64
      i64(-1) +                                                                         //   data
      u64(2) + u64(5) + "arg:w" + u64(5) + "aux:n";                                     // the names
  CHECK(wavg::test::read_all(path) == expected);
}

TEST_CASE("MXNet writer keeps a plain list plain and refuses a scalar") {
  TempDir dir;
  MxnetReader plain(dir.write("p.params", k_list + u64(1) + k_v2_array + u64(0)));
  OutputSpec spec;
  spec.tensors = plain.tensors();
  spec.template_input = &plain;
  const std::string path = dir.write("out.params", "");
  {
    auto w = create_mxnet_writer(path, "out.params", spec);
    const float v[2] = {1.5f, -2.0f};
    w->write(0, 0, 2, v);
    w->finish();
  }
  CHECK(wavg::test::read_all(path) == k_list + u64(1) + k_v2_array + u64(0));

  OutputSpec scalar;
  scalar.tensors = {{"s", DType::f32, {}}};
  try {
    create_mxnet_writer(path, "out.params", scalar);
    FAIL("a scalar was accepted");
  } catch (const Error& e) {
    CHECK(e.problems()[0].what == "s: a scalar cannot be stored in MXNet's V2 encoding (ndim 0 means no array)");
  }
}

TEST_CASE("MXNet corrupt files are one-line errors naming what is wrong") {
  const std::string one = k_list + u64(1);
  const std::string tail = names({"w"});
  CHECK(open_error(one + k_v2_array + tail).empty());
  // truncations: in the list header, in an array's header, in its data, in the names
  CHECK(open_error(k_list.substr(0, 12)) == "truncated: reserved word at byte 8 needs 8 bytes, 4 left");
  CHECK(open_error(one + k_v2_array.substr(0, 10)) == "array count 1 is more than the 10 bytes left can hold");
  CHECK(open_error(one + k_v2_array.substr(0, 18)) ==
        "truncated: array 0 shape (1 dimensions) at byte 36 needs 8 bytes, 6 left");
  CHECK(open_error(one + k_v2_array.substr(0, 36)) ==
        "truncated: array 0 data, float32 (2,), at byte 56 needs 8 bytes, 4 left");
  CHECK(open_error(one + k_v2_array + tail.substr(0, 12)) ==
        "truncated: length of name 0 at byte 72 needs 8 bytes, 4 left");
  CHECK(open_error(one + k_v2_array + tail.substr(0, 16)) == "truncated: name 0 at byte 80 needs 1 bytes, 0 left");
  // counts and lengths set huge
  CHECK(open_error(k_list + u64(~0ull) + k_v2_array + tail) ==
        "array count 18446744073709551615 is more than the 57 bytes left can hold");
  CHECK(open_error(one + k_v2_array + u64(1) + u64(1ull << 62) + "w") ==
        "truncated: name 0 at byte 80 needs 4611686018427387904 bytes, 1 left");
  CHECK(open_error(one + u32(0xF993FAC9) + i32(0) + i32(0x7fffffff) + i64(2)) ==
        "truncated: array 0 shape (2147483647 dimensions) at byte 36 needs 17179869176 bytes, 8 left");
  CHECK(open_error(one + u32(0xF993FAC9) + i32(0) + i32(2) + i64(1ll << 40) + i64(1ll << 40) + k_cpu + i32(0)) ==
        "array 0: shape (1099511627776, 1099511627776) overflows");
  CHECK(open_error(one + u32(0xF993FAC9) + i32(0) + i32(1) + i64(1ll << 40) + k_cpu + i32(0) + f32_bytes({1})) ==
        "truncated: array 0 data, float32 (1099511627776,), at byte 56 needs 4398046511104 bytes, 4 left");
  CHECK(open_error(one + k_v2_array + u64(3) + tail.substr(8)) == "name count 3 is neither 0 nor the array count 1");
  // wrong magics: of the list (not sniffed at all), of an array
  CHECK(open_error(u64(0x113) + u64(0) + u64(0)) == "not an MXNet NDArray list (no magic 0x112)");
  CHECK(open_error(one + u32(0xF993FACB) + k_v2_array.substr(4) + tail) ==
        "array 0: unknown array encoding (first word 0xF993FACB is no array magic and too large for a legacy "
        "dimension count)");
  // what cannot be averaged, by name
  CHECK(open_error(one + u32(0xF993FAC9) + i32(1) + k_v2_array.substr(8) + tail) ==
        "array 0: row_sparse storage is not supported (wavg averages dense arrays; save it with "
        ".tostype('default'))");
  CHECK(open_error(one + u32(0xF993FAC9) + i32(2) + k_v2_array.substr(8) + tail).find("csr storage") == 9);
  CHECK(open_error(one + u32(0xF993FAC9) + i32(0) + i32(0) + tail) ==
        "array 0: holds no array (saved without a shape)");
  CHECK(open_error(one + u32(0xF993FACA) + i32(0) + i32(-1) + tail) ==
        "array 0: holds no array (saved without a shape)");
  CHECK(open_error(one + u32(0xF993FACA) + i32(0) + i32(1) + i64(-1) + k_cpu + i32(0) + tail) ==
        "array 0: dimension 0 is -1 (unknown)");
  CHECK(open_error(one + k_v2_array.substr(0, 28) + i32(13) + f32_bytes({1, 2}) + tail) ==
        "array 0: unknown dtype flag 13");
  CHECK(open_error(one + k_v2_array.substr(0, 20) + i32(9) + i32(0) + i32(0) + f32_bytes({1, 2}) + tail) ==
        "array 0: unknown device type 9");
  CHECK(open_error(k_list + u64(2) + k_v2_array + k_v2_array + names({"w", "w"})) == "the name w appears twice");
  CHECK(open_error(one + k_v2_array + names({""})) == "array 0 has an empty name");
  CHECK(open_error(one + k_v2_array + tail + "x") == "1 unexpected bytes after the names (at byte 81)");
  CHECK(open_error("").find("truncated: list magic") == 0);
}

TEST_CASE("MXNet writer writes V3 arrays, scalars included, when input 1 was saved in numpy semantics") {
  TempDir dir;
  const std::string v3_scalar = u32(0xF993FACA) + i32(0) + i32(0) + k_cpu + i32(0) + f32_bytes({0.5f});
  MxnetReader in(dir.write("v3.params", k_list + u64(1) + v3_scalar + names({"s"})));
  CHECK(in.numpy_semantics());
  OutputSpec spec;
  spec.tensors = in.tensors();
  spec.template_input = &in;
  const std::string path = dir.write("out.params", "");
  {
    auto w = create_mxnet_writer(path, "out.params", spec);
    const float v = 0.5f;
    w->write(0, 0, 1, &v);
    w->finish();
  }
  CHECK(wavg::test::read_all(path) == k_list + u64(1) + v3_scalar + names({"s"}));
}
