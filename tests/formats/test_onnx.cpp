// ONNX: ModelProto wire bytes assembled here by hand (the field numbers of formats/onnx/onnx.hpp), read back in each
// value form (raw_data, typed fields, external data); roles from the graph; the sniff; what the reader refuses.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>

#include "onnx/onnx.hpp"
#include "support/bytes.hpp"
#include "support/open_error.hpp"
#include "support/temp_dir.hpp"
#include "wavg/error.hpp"

using namespace wavg;
using wavg::test::field;
using wavg::test::number;
using wavg::test::TempDir;
using wavg::test::varint;
constexpr auto floats = wavg::test::f32_bytes;

namespace {

constexpr int k_float = 1, k_int64 = 7, k_float16 = 10;

// A TensorProto: dims (1), data_type (2), name (8), then its value fields.
std::string tensor(const std::string& name, int type, std::initializer_list<std::int64_t> dims,
                   const std::string& values) {
  std::string s;
  for (auto d : dims) s += number(1, d);
  return s + number(2, type) + field(8, name) + values;
}
std::string raw(const std::string& bytes) { return field(9, bytes); }
std::string external(const std::string& location, std::uint64_t offset, std::uint64_t length) {
  return field(13, field(1, "location") + field(2, location)) +
         field(13, field(1, "offset") + field(2, std::to_string(offset))) +
         field(13, field(1, "length") + field(2, std::to_string(length))) + number(14, 1);
}
// A node: inputs (1), outputs (2), op_type (4).
std::string node(const std::string& op, std::initializer_list<std::string> in, const std::string& out,
                 const std::string& attributes = "") {
  std::string s;
  for (const auto& i : in) s += field(1, i);
  return field(1, s + field(2, out) + field(4, op) + attributes);
}
// A Constant node whose `value` attribute (5: name 1, t 5, type 20 = TENSOR) holds `t`.
std::string constant(const std::string& out, const std::string& t) {
  return node("Constant", {}, out, field(5, field(1, "value") + field(5, t) + number(20, 4)));
}
// A ModelProto: ir_version 8, producer "test", a graph (7) of `nodes` and `initializers`.
std::string model(const std::string& nodes, std::initializer_list<std::string> initializers) {
  std::string g = nodes;
  for (const auto& t : initializers) g += field(5, t);
  return number(1, 8) + field(2, "test") + field(7, g);
}

std::string open_error(const std::string& bytes) { return test::open_error<OnnxReader>("m.onnx", bytes); }

}  // namespace

TEST_CASE("ONNX reader reads raw_data and typed fields, with roles from the graph") {
  TempDir dir;
  const std::string f16 = number(5, 0x3c00) + number(5, 0xc000);  // 1.0 and -2.0, unpacked int32_data
  const std::string bytes = model(
      node("Gemm", {"x", "W", "B"}, "h") + constant("C", tensor("", k_float, {2}, raw(floats({3, 4})))) +
          node("Reshape", {"h", "shape"}, "r") + node("Resize", {"r", "", "scales"}, "y"),
      {tensor("W", k_float, {2, 1}, raw(floats({1, 2}))), tensor("B", k_float, {2}, field(4, floats({5, 6}))),
       tensor("H", k_float16, {2}, f16), tensor("shape", k_int64, {2}, field(7, varint(1) + varint(2))),
       tensor("scales", k_float, {2}, raw(floats({1, 1})))});
  const std::string path = dir.write("m.onnx", bytes);
  REQUIRE(looks_like_onnx(path));
  OnnxReader r(path);
  CHECK(r.layout() == "ModelProto, IR version 8, from test");
  REQUIRE(r.tensors().size() == 6);
  const char* names[] = {"W", "B", "H", "shape", "scales", "C"};
  const Role roles[] = {Role::weight, Role::weight, Role::weight, Role::constant, Role::constant, Role::weight};
  for (std::size_t i = 0; i < 6; ++i) {
    CHECK(r.tensors()[i].name == names[i]);
    CHECK(r.tensors()[i].role == roles[i]);
  }
  float f[2];
  r.read(1, 0, 2, f);  // float_data
  CHECK((f[0] == 5 && f[1] == 6));
  CHECK(r.view(1, 0, 2) == nullptr);
  r.read(5, 1, 1, f);  // the Constant's raw_data
  CHECK(f[0] == 4);
  CHECK(r.view(0, 0, 2) != nullptr);
  std::uint16_t h[2];
  r.read(2, 0, 2, h);
  CHECK((h[0] == 0x3c00 && h[1] == 0xc000));
  std::int64_t s[2];
  r.read(3, 0, 2, s);
  CHECK((s[0] == 1 && s[1] == 2));
}

TEST_CASE("ONNX reader reads external data beside the model and lists its file") {
  TempDir dir;
  dir.write("w.bin", "pad." + floats({7, 8, 9}));
  const std::string path = dir.write("m.onnx", model("", {tensor("W", k_float, {3}, external("w.bin", 4, 12))}));
  OnnxReader r(path);
  CHECK(r.files() == std::vector<std::string>{path, dir.path() + "/w.bin"});
  float f[3];
  r.read(0, 0, 3, f);
  CHECK((f[0] == 7 && f[2] == 9));
  const std::string past = dir.write("a.onnx", model("", {tensor("W", k_float, {3}, external("w.bin", 8, 12))}));
  try {
    OnnxReader a(past);
    FAIL("a range past the file's end opened");
  } catch (const Error& e) {
    CHECK(e.problems().front().what == "initializer W: bytes 8 to 20 lie outside w.bin (16 bytes)");
  }
}

TEST_CASE("ONNX reader refuses external data outside the model's folder") {
  CHECK(open_error(model("", {tensor("W", k_float, {1}, external("../w.bin", 0, 4))})) ==
        "initializer W's external data ../w.bin: its path has a '..' component (it must lie in the model's folder)");
  CHECK(open_error(model("", {tensor("W", k_float, {1}, external("/etc/passwd", 0, 4))})) ==
        "initializer W's external data /etc/passwd: its path is absolute (it must lie in the model's folder)");
  CHECK(open_error(model("", {tensor("W", k_float, {1}, external("w.bin", 0, 8))})) ==
        "initializer W: external_data length 8 bytes; its shape takes 4");
}

TEST_CASE("ONNX reader refuses tensors whose values disagree with their shape") {
  CHECK(open_error(model("", {tensor("W", k_float, {3}, raw(floats({1, 2})))})) ==
        "initializer W: raw_data holds 8 bytes; its shape (3,) of float32 takes 12");
  CHECK(open_error(model("", {tensor("W", k_float, {3}, field(4, floats({1, 2})))})) ==
        "initializer W: holds 2 values; its shape (3,) takes 3");
  CHECK(open_error(model("", {tensor("W", k_float, {-1}, "")})) == "initializer W: dimension -1 is negative");
  CHECK(open_error(model("", {tensor("W", k_float, {1ll << 40, 1ll << 40}, "")})) ==
        "initializer W: its shape (1099511627776, 1099511627776) overflows");
  CHECK(open_error(model("", {tensor("W", k_float, {1}, raw(floats({1})) + field(4, floats({1})))})) ==
        "initializer W: its values are stored in more than one form (raw_data, typed, external)");
  CHECK(open_error(model("", {tensor("W", k_float, {1}, raw(floats({1}))), tensor("W", k_float, {}, "")})) ==
        "initializer W appears twice in the graph");
  CHECK(open_error(number(1, 8)) == "the ModelProto has no graph");
  CHECK(open_error(number(1, 8) + field(7, field(5, "\xff"))) ==
        "not a valid ONNX ModelProto (protobuf cannot parse it)");
}

TEST_CASE("ONNX sniff wants ir_version first and a graph") {
  TempDir dir;
  CHECK(looks_like_onnx(dir.write("a", model("", {}))));
  CHECK(!looks_like_onnx(dir.write("b", number(1, 8) + field(2, "no graph"))));
  CHECK(!looks_like_onnx(dir.write("c", field(7, "") + number(1, 8))));  // ir_version not first
  CHECK(!looks_like_onnx(dir.write("d", number(1, 8) + field(9, "") + field(7, ""))));  // no field 9 in a model
  CHECK(!looks_like_onnx(dir.write("e", number(1, 8) + wavg::test::tag(7, 2) + varint(100))));  // past the end
  CHECK(!looks_like_onnx(dir.write("f", "")));
}
