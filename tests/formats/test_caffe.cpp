// Caffe .caffemodel: NetParameter wire bytes assembled here by hand (varints, tags, lengths: the layout in
// formats/caffe/caffe.hpp), read back; the V1 legacy shapes' normalisation; the sniff; wire-format errors.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>

#include "caffe/caffe.hpp"
#include "support/bytes.hpp"
#include "support/open_error.hpp"
#include "support/temp_dir.hpp"
#include "wavg/error.hpp"

using namespace wavg;
using wavg::test::TempDir;
constexpr auto floats = wavg::test::f32_bytes;
using wavg::test::field;
using wavg::test::number;
using wavg::test::tag;
using wavg::test::varint;

namespace {

// A blob with a BlobShape and float data.
std::string blob(std::initializer_list<std::uint64_t> dims, std::initializer_list<float> values) {
  std::string d;
  for (auto x : dims) d += varint(x);
  return field(7, field(1, d)) + field(5, floats(values));
}
// A blob with the legacy 4-D shape.
std::string legacy_blob(int n, int c, int h, int w, std::initializer_list<float> values) {
  return number(1, n) + number(2, c) + number(3, h) + number(4, w) + field(5, floats(values));
}
// A V1 layer: name (4), type (5), blobs (6).
std::string v1_layer(const std::string& name, int type, std::initializer_list<std::string> blobs) {
  std::string s = field(2, "bottom") + field(4, name) + number(5, type);
  for (const auto& b : blobs) s += field(6, b);
  return field(2, s);
}

std::string open_error(const std::string& bytes) { return test::open_error<CaffeReader>("x.caffemodel", bytes); }

}  // namespace

TEST_CASE("Caffe reader names blobs LAYER/INDEX in the current layout, float and double") {
  TempDir dir;
  const std::string dd = test::le_bytes(0.5) + test::le_bytes(-1.0);
  const std::string bytes = field(1, "net") +
                            field(100, field(1, "data") + field(2, "Input")) +  // no blobs: no tensors
                            field(100, field(1, "ip") + field(2, "InnerProduct") + field(7, blob({2, 1}, {1, 2})) +
                                           field(7, field(7, field(1, varint(2))) + field(8, dd)));
  const std::string path = dir.write("m.caffemodel", bytes);
  REQUIRE(looks_like_caffe(path));
  CaffeReader r(path);
  CHECK(r.layout() == "NetParameter, current layout (layer)");
  CHECK(r.metadata().at("name") == "net");
  REQUIRE(r.tensors().size() == 2);
  CHECK(r.tensors()[0].name == "ip/0");
  CHECK(r.tensors()[0].shape == Shape{2, 1});
  CHECK(r.tensors()[0].dtype == DType::f32);
  CHECK(r.tensors()[1].name == "ip/1");
  CHECK(r.tensors()[1].dtype == DType::f64);
  float f[2];
  r.read(0, 0, 2, f);
  CHECK(f[1] == 2.0f);
  double d = 0;
  r.read(1, 1, 1, &d);
  CHECK(d == -1.0);
}

TEST_CASE("Caffe reader gives V1 legacy 4-D shapes the shapes Caffe gives them today") {
  TempDir dir;
  const std::string bytes =
      field(1, "net") +
      v1_layer("conv", 4, {legacy_blob(1, 1, 1, 2, {1, 2}), legacy_blob(1, 1, 1, 1, {3})}) +  // 1 output: stays 4-D
      v1_layer("ip", 14, {legacy_blob(1, 1, 1, 2, {1, 2}), legacy_blob(1, 1, 1, 1, {3})}) +   // (O, I) = (1, 2)
      v1_layer("other", 99, {legacy_blob(1, 2, 1, 1, {1, 2})});                               // leading 1s dropped
  const std::string path = dir.write("v1.caffemodel", bytes);
  REQUIRE(looks_like_caffe(path));
  CaffeReader r(path);
  CHECK(r.layout() == "NetParameter, V1 layout (layers)");
  REQUIRE(r.tensors().size() == 5);
  CHECK(r.tensors()[0].shape == Shape{1, 1, 1, 2});
  CHECK(r.tensors()[1].shape == Shape{1});
  CHECK(r.tensors()[2].shape == Shape{1, 2});
  CHECK(r.tensors()[3].shape == Shape{1});
  CHECK(r.tensors()[4].name == "other/0");
  CHECK(r.tensors()[4].shape == Shape{2, 1, 1});
}

TEST_CASE("Caffe sniff wants NetParameter fields and a named layer") {
  TempDir dir;
  CHECK(looks_like_caffe(dir.write("a", field(1, "n") + field(100, field(1, "x")))));
  CHECK(looks_like_caffe(dir.write("b", number(5, 1) + v1_layer("x", 4, {}))));
  CHECK(!looks_like_caffe(dir.write("c", field(1, "n"))));                              // no layer
  CHECK(!looks_like_caffe(dir.write("d", field(100, field(2, "Input")))));              // a layer without a name
  CHECK(!looks_like_caffe(dir.write("e", number(1, 5) + field(100, field(1, "x")))));   // name is no varint
  CHECK(!looks_like_caffe(dir.write("f", field(9, "?") + field(100, field(1, "x")))));  // unknown net field
  CHECK(!looks_like_caffe(dir.write("g", "{\"format\": \"wavg-json\"}")));
  CHECK(!looks_like_caffe(dir.write("h", std::string("\x12\x01\x00\x00\x00\x00\x00\x00", 8))));  // MXNet's magic
  CHECK(!looks_like_caffe(dir.write("i", "")));
}

TEST_CASE("Caffe wire-format errors name the field and the byte") {
  const std::string ok = field(1, "n") + field(100, field(1, "ip") + field(7, blob({2}, {1, 2})));
  CHECK(open_error(ok).empty());
  // ok: the net's name (3 bytes), the layer's tag (2) and length (1) at byte 3, then the layer (21): its name (4),
  // the blob's tag and length (2) at byte 10, the blob (15) from byte 12: shape (5) and data (10).
  CHECK(open_error(ok.substr(0, ok.size() - 1)) ==
        "not a valid NetParameter protobuf: truncated: field 100 (layer) at byte 3 claims 21 bytes, 20 left");
  CHECK(open_error(field(1, "n") + tag(100, 2) + varint(1ull << 62) + "xx") ==
        "not a valid NetParameter protobuf: truncated: field 100 (layer) at byte 3 claims 4611686018427387904 "
        "bytes, 2 left");
  CHECK(open_error(field(1, "n") + field(100, field(1, "ip") + tag(7, 2) + std::string(10, '\xff') + "\x01")) ==
        "not a valid NetParameter protobuf: broken varint (a length) in field 7 (blobs) at byte 10");
  CHECK(open_error(field(1, "n") + field(100, field(1, "ip") + field(7, tag(5, 7)))) ==
        "not a valid NetParameter protobuf: unknown wire type 7 in field 5 at byte 12");
  // what the parser accepts but wavg cannot average
  CHECK(open_error(field(100, field(1, "ip") + field(7, blob({3}, {1, 2})))) ==
        "blob ip/0 holds 2 values but its shape (3,) needs 3");
  CHECK(open_error(field(100, field(1, "ip") + field(7, blob({1ull << 40, 1ull << 40}, {1})))) ==
        "blob ip/0: shape (1099511627776, 1099511627776) overflows");
  CHECK(open_error(field(100, field(1, "ip") + field(7, blob({~0ull}, {1})))) == "blob ip/0: negative dimension -1");
  CHECK(open_error(field(100, field(1, "ip") + field(7, blob({1}, {1}) + field(6, floats({0}))))) ==
        "blob ip/0 holds gradients (diff): snapshots of weights only are supported");
  CHECK(open_error(field(100, field(1, "ip") + field(7, blob({1}, {1}))) + v1_layer("x", 4, {})) ==
        "holds both layer (current layout) and layers (V1 layout)");
  CHECK(open_error(field(100, field(1, "ip") + field(7, blob({1}, {1}))) +
                   field(100, field(1, "ip") + field(7, blob({1}, {1})))) == "two layers with blobs are named ip");
  CHECK(open_error(field(100, field(7, blob({1}, {1})))) == "a layer with 1 blobs has no name");
  CHECK(open_error(field(2, field(1, field(50, blob({1}, {1}))) + field(4, "old"))) ==
        "layer old is in the V0 layout (before 2014), which is not supported");
}

TEST_CASE("Caffe reader lends a packed field at any byte offset, as it lies in the file") {
  // The net's name shifts the packed values by 0 to 3 bytes: byte 24 + 0 .. 3 (see the test below).
  for (std::size_t extra = 0; extra < 4; ++extra) {
    TempDir dir;
    const std::string bytes =
        field(1, "net123" + std::string(extra, 'x')) +
        field(100, field(1, "ip") + field(7, field(7, field(1, varint(2))) + field(5, floats({4, 5}))));
    CaffeReader r(dir.write("m.caffemodel", bytes));
    const void* v = r.view(0, 0, 2);
    REQUIRE(v != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(v) % 4 == extra);  // the mapping starts on a page
    CHECK(std::memcmp(v, floats({4, 5}).data(), 8) == 0);
  }
}

TEST_CASE("Caffe reader serves values from the mapped file, packed, split or unpacked") {
  TempDir dir;
  std::string unpacked;
  for (float x : {1.0f, 2.0f, 3.0f}) unpacked += tag(5, 5) + floats({x});
  // Net name (8 bytes), layer tag and length (3), layer name (4), blob tag and length (2), shape (5), data tag and
  // length (2): the packed values start at byte 24, a multiple of 4.
  const std::string packed = field(7, field(1, varint(2))) + field(5, floats({4, 5}));
  const std::string split = field(7, field(1, varint(3))) + field(5, floats({6})) + field(5, floats({7, 8}));
  const std::string bytes = field(1, "net123") + field(100, field(1, "ip") + field(7, packed) + field(7, split) +
                                                                field(7, field(7, field(1, varint(3))) + unpacked));
  const std::string path = dir.write("m.caffemodel", bytes);
  CaffeReader r(path);
  REQUIRE(r.tensors().size() == 3);
  const void* v = r.view(0, 0, 2);
  REQUIRE(v != nullptr);
  CHECK(std::memcmp(v, floats({4, 5}).data(), 8) == 0);
  CHECK(r.view(1, 0, 3) == nullptr);  // two runs
  CHECK(r.view(2, 0, 1) == nullptr);  // unpacked
  float f[3] = {};
  r.read(1, 0, 3, f);
  CHECK((f[0] == 6 && f[1] == 7 && f[2] == 8));
  r.read(1, 1, 2, f);
  CHECK((f[0] == 7 && f[1] == 8));
  r.read(2, 1, 2, f);
  CHECK((f[0] == 2 && f[1] == 3));
  r.release(1, 0, 3);
  r.prefetch(2, 0, 3);

  CHECK(open_error(field(100, field(1, "ip") + field(7, field(7, field(1, varint(1))) + field(5, "abc")))) ==
        "not a valid NetParameter protobuf: packed field 5 of 3 bytes holds no whole number of 4-byte values at "
        "byte 14");  // layer tag and length (3), name (4), blob tag and length (2), shape (5)
}
