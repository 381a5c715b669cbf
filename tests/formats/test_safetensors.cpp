// safetensors: files built byte by byte here (the layout in formats/safetensors/safetensors.hpp), the writer's
// output compared with an expected file annotated byte by byte, and the reference implementation's corrupt cases.
#include <doctest/doctest.h>

#include <cstring>

#include "safetensors/safetensors.hpp"
#include "support/bytes.hpp"
#include "support/open_error.hpp"
#include "support/temp_dir.hpp"
#include "wavg/error.hpp"

using namespace wavg;
using wavg::test::f32_bytes;
using wavg::test::TempDir;

namespace {

std::string le64(std::uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>(v >> (8 * i));
  return s;
}

// A safetensors file: length prefix, header text, data bytes.
std::string file_bytes(const std::string& header, const std::string& data) {
  return le64(header.size()) + header + data;
}

// Opens `bytes` as a safetensors file and returns the one-line error message (empty when it opened).
std::string open_error(const std::string& bytes) { return test::open_error<SafetensorsReader>("x.safetensors", bytes); }

}  // namespace

TEST_CASE("safetensors reader lists tensors in data order with dtype, shape and values") {
  TempDir dir;
  const std::string header = R"({"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
                             R"("a":{"dtype":"I64","shape":[],"data_offsets":[0,8]},"__metadata__":{"k":"v"}})";
  const std::string path = dir.write("m.safetensors", file_bytes(header, le64(7) + f32_bytes({1.5f, -2.0f})));
  REQUIRE(looks_like_safetensors(path));
  SafetensorsReader r(path);
  REQUIRE(r.tensors().size() == 2);
  CHECK(r.tensors()[0].name == "a");
  CHECK(r.tensors()[0].dtype == DType::i64);
  CHECK(r.tensors()[0].shape.empty());
  CHECK(r.tensors()[1].name == "b");
  CHECK(r.tensors()[1].shape == Shape{2});
  CHECK(r.metadata() == std::map<std::string, std::string>{{"k", "v"}});
  float v[2];
  r.read(1, 0, 2, v);
  CHECK(v[0] == 1.5f);
  CHECK(v[1] == -2.0f);
  r.read(1, 1, 1, v);
  CHECK(v[0] == -2.0f);
  std::int64_t i = 0;
  r.read(0, 0, 1, &i);
  CHECK(i == 7);
}

TEST_CASE("safetensors writer pads the header to 8 bytes and orders tensors by element size, then name") {
  TempDir dir;
  OutputSpec spec;
  spec.tensors = {{"w", DType::f32, {2}}, {"n", DType::i64, {}}, {"h", DType::f16, {1}}};
  spec.provenance = Provenance(std::map<std::string, std::string>{{"wavg_version", "9"}});
  const std::string path = dir.file("out.safetensors");
  { std::ofstream(path, std::ios::binary); }
  {
    auto w = create_safetensors_writer(path, "out.safetensors", spec);
    const float wv[2] = {1.0f, 2.0f};
    const std::int64_t nv = -1;
    const std::uint16_t hv = 0x3c00;  // 1.0 in binary16
    w->write(0, 0, 2, wv);
    w->write(1, 0, 1, &nv);
    w->write(2, 0, 1, &hv);
    w->finish();
  }
  // The header JSON is 198 bytes; 2 spaces pad it to 200 = 25 x 8.
  const std::string header = R"({"__metadata__":{"wavg_version":"9"},)"                    // metadata first
                             R"("n":{"dtype":"I64","shape":[],"data_offsets":[0,8]},)"     // 8-byte elements first
                             R"("w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"   // then 4-byte
                             R"("h":{"dtype":"F16","shape":[1],"data_offsets":[16,18]}})"  // then 2-byte
                             "  ";
  REQUIRE(header.size() % 8 == 0);
  const std::string expected = le64(header.size()) + header +
                               std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8) +  // n = -1
                               std::string("\x00\x00\x80\x3f\x00\x00\x00\x40", 8) +  // w = 1.0f, 2.0f
                               std::string("\x00\x3c", 2);                           // h = 1.0 (half)
  CHECK(wavg::test::read_all(path) == expected);
}

TEST_CASE("safetensors corrupt files are one-line errors, never crashes") {
  const std::string ok_entry = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  const std::string data8 = f32_bytes({1, 2});
  CHECK(open_error(file_bytes("{" + ok_entry + "}", data8)).empty());

  // truncated before the length prefix ends
  CHECK(open_error(std::string("\x10\x00\x00", 3)).find("truncated") != std::string::npos);
  CHECK(open_error("").find("truncated") != std::string::npos);
  // a header that lies about its length
  CHECK(open_error(le64(1000) + "{" + ok_entry + "}").find("runs past the end") != std::string::npos);
  CHECK(open_error(le64(200'000'000) + "{}").find("exceeds the limit") != std::string::npos);
  CHECK(open_error(le64(~0ull) + "{}").find("exceeds the limit") != std::string::npos);
  // truncated data: the tensor ends past the end of the file
  CHECK(open_error(file_bytes("{" + ok_entry + "}", data8.substr(0, 5))).find("past the end") != std::string::npos);
  // trailing bytes after the last tensor
  CHECK(open_error(file_bytes("{" + ok_entry + "}", data8 + "xx")).find("tensors use 8") != std::string::npos);
  // not JSON, not UTF-8, not an object
  CHECK(open_error(file_bytes("{\"a\":", "")).find("not valid JSON") != std::string::npos);
  CHECK(open_error(file_bytes("{\"\xff\":1}", "")).find("not valid UTF-8") != std::string::npos);
  CHECK(open_error(file_bytes("{\"\xc0\xaf\":1}", "")).find("not valid UTF-8") != std::string::npos);  // overlong
  CHECK(open_error(file_bytes("[1]", "")).find("start with '{'") != std::string::npos);
  // duplicate names, at the top and inside an entry
  CHECK(open_error(file_bytes("{" + ok_entry + "," + ok_entry + "}", data8)).find("key a twice") != std::string::npos);
  CHECK(open_error(file_bytes(R"({"a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}})", data8))
            .find("twice") != std::string::npos);
  // dtypes: unknown, and known but not supported (named with the tensor)
  CHECK(open_error(file_bytes(R"({"a":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}})", data8)) ==
        "a: unknown safetensors dtype F33");
  CHECK(open_error(file_bytes(R"({"q":{"dtype":"F8_E4M3","shape":[8],"data_offsets":[0,8]}})", data8)) ==
        "q: dtype F8_E4M3 is not supported (wavg averages F16, BF16, F32 and F64)");
  CHECK(open_error(file_bytes(R"({"c":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})", data8)).find("C64") !=
        std::string::npos);
  // offsets: not from 0, gaps, overlaps, reversed
  CHECK(
      open_error(file_bytes(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", data8)).find("leave a gap") !=
      std::string::npos);
  CHECK(open_error(file_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                              R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                              data8))
            .find("overlap") != std::string::npos);
  CHECK(open_error(file_bytes(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", data8)).size() > 0);
  // size disagreeing with shape; absurd dimensions whose product overflows
  CHECK(open_error(file_bytes(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", data8)).find("needs 12") !=
        std::string::npos);
  CHECK(open_error(file_bytes(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", data8))
            .find("overflows") != std::string::npos);
  CHECK(open_error(file_bytes(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", data8)).size() > 0);
  CHECK(open_error(file_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", data8)).size() > 0);
  CHECK(open_error(file_bytes(R"({"a":{"shape":[2],"data_offsets":[0,8]}})", data8)).size() > 0);
  CHECK(open_error(file_bytes(R"({"a":[]})", data8)).size() > 0);
  // __metadata__ must map strings to strings
  CHECK(open_error(file_bytes(R"({"__metadata__":{"k":1}})", "")).find("not a string") != std::string::npos);
  CHECK(open_error(file_bytes(R"({"__metadata__":[]})", "")).find("not an object") != std::string::npos);
  // a number beyond double's range: nlohmann throws out_of_range, not parse_error; still this file's error
  CHECK(open_error(file_bytes(R"({"__metadata__":{"k":"v"},"x":1e400})", "")) ==
        "safetensors header is not valid JSON (at byte 43: a number out of range)");
}

TEST_CASE("safetensors headers of many tensors parse whole") {
  // 200k one-element tensors: about 13 MB of header, every entry read and checked. How long it takes is the
  // benchmark's to say (tests/bench/many_tensors.py: quadratic parsing once took 44 s for 60k), not a timed test's.
  // Under AddressSanitizer (the sanitize preset runs this suite too) a smaller header.
#if defined(__SANITIZE_ADDRESS__)
  constexpr std::size_t n = 20'000;
#else
  constexpr std::size_t n = 200'000;
#endif
  std::string header = "{";
  std::string data;
  for (std::size_t i = 0; i < n; ++i) {
    if (i) header += ',';
    header += "\"t" + std::to_string(i) + "\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[" +
              std::to_string(4 * i) + "," + std::to_string(4 * i + 4) + "]}";
  }
  header += "}";
  data.assign(4 * n, '\0');
  TempDir dir;
  const std::string path = dir.write("many.safetensors", file_bytes(header, data));
  SafetensorsReader r(path);
  REQUIRE(r.tensors().size() == n);
  CHECK(r.tensors().back().shape == std::vector<std::uint64_t>{1});
}

TEST_CASE("safetensors reader reads the real files from other writers") {
  const std::string root = std::string(WAVG_SHARED_DIR) + "/real-checkpoints/";
  if (!std::filesystem::exists(root)) {
    MESSAGE("skipped: " << root << " is absent");
    return;
  }
  // hf sample: header length 83 (data misaligned), F16, __metadata__ {"test":"a"}
  SafetensorsReader e(root + "hf-safetensors-dtype-samples/e.safetensors");
  REQUIRE(e.tensors().size() == 1);
  CHECK(e.tensors()[0].dtype == DType::f16);
  CHECK(e.tensors()[0].shape == Shape{6});
  CHECK(e.metadata().at("test") == "a");
  // burn BatchNorm: I64 scalars ordered before F32 tensors
  SafetensorsReader c(root + "burn-safetensors-edge/complex_nested.safetensors");
  CHECK(c.tensors().size() == 23);
  CHECK(c.tensors()[0].dtype == DType::i64);
  CHECK(c.tensors()[0].shape.empty());
  SafetensorsReader b(root + "burn-safetensors-edge/boolean.safetensors");
  REQUIRE(b.tensors().size() == 1);
  CHECK(b.tensors()[0].dtype == DType::boolean);
}
