// wavg JSON: documents written by hand here (the layout in formats/json/json.hpp and SPEC.md), the writer's
// output compared with expected text, every dtype round-tripped bit for bit, and a matrix of corrupt documents.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "json/json.hpp"
#include "support/open_error.hpp"
#include "support/temp_dir.hpp"
#include "wavg/error.hpp"

using namespace wavg;
using wavg::test::TempDir;

namespace {

// Opens `text` as wavg JSON and returns the one-line error message (empty when it opened).
std::string open_error(const std::string& text) { return test::open_error<JsonReader>("x.json", text); }

std::string doc(const std::string& tensors) {
  return R"({"format": "wavg-json", "version": 1, "tensors": [)" + tensors + "]}";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

template <class T>
T bits_of(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// A reader whose tensors are given in binary, to feed a writer as input 1.
class FakeReader final : public Reader {
 public:
  std::vector<TensorInfo> infos;
  std::vector<std::string> data;
  std::string m_path = "fake";
  const std::string& path() const override { return m_path; }
  std::string format_name() const override { return "fake"; }
  std::string layout() const override { return "fake"; }
  const std::vector<TensorInfo>& tensors() const override { return infos; }
  void read(std::size_t i, std::uint64_t off, std::uint64_t n, void* dst) override {
    const auto e = dtype_size(infos[i].dtype);
    std::memcpy(dst, data[i].data() + off * e, n * e);
  }
  std::map<std::string, std::string> metadata() const override { return {}; }
};

std::string write_json(const std::vector<TensorInfo>& tensors, const std::vector<std::string>& data,
                       JsonEncoding encoding, std::map<std::string, std::string> provenance = {}) {
  TempDir dir;
  const std::string path = dir.write("out.json", "");
  OutputSpec spec{tensors, nullptr, {}, std::move(provenance)};
  auto w = create_json_writer(path, path, spec, encoding);
  // Blocks in reverse order: the writer must not depend on the order values arrive in.
  for (std::size_t i = tensors.size(); i-- > 0;) {
    const auto e = dtype_size(tensors[i].dtype);
    const auto n = tensors[i].count();
    for (std::uint64_t off = n; off > 0; --off) w->write(i, off - 1, 1, data[i].data() + (off - 1) * e);
  }
  w->finish();
  return slurp(path);
}

template <class T>
std::string raw(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof v);
  return s;
}

}  // namespace

TEST_CASE("wavg JSON reader decodes decimals, special strings and base64 into each dtype") {
  TempDir dir;
  const std::string path = dir.write("m.json", R"({"format":"wavg-json","version":1,
    "metadata":{"k":"v","\u00e9":"caf\u00e9"},
    "tensors":[
      {"name":"w","dtype":"float32","shape":[2,3],"data":[0.1,-0,"NaN","Infinity","-Infinity","NaN:0xffc00001"]},
      {"name":"h","dtype":"float16","shape":[2],"data":[0.1,65504]},
      {"name":"i","dtype":"int64","shape":[],"encoding":"base64","data":"BwAAAAAAAAA="},
      {"name":"u","dtype":"uint8","shape":[2],"data":[0,255]},
      {"name":"b","dtype":"bool","shape":[2],"data":[true,false]}]})");
  REQUIRE(looks_like_wavg_json(path));
  JsonReader r(path);
  REQUIRE(r.tensors().size() == 5);
  CHECK(r.tensors()[0].shape == Shape{2, 3});
  CHECK(r.metadata().at("k") == "v");
  CHECK(r.metadata().at("\xc3\xa9") == "caf\xc3\xa9");
  std::uint32_t w[6];
  r.read(0, 0, 6, w);
  CHECK(w[0] == 0x3dcccccd);  // 0.1f
  CHECK(w[1] == 0x80000000);  // -0
  CHECK(w[2] == 0x7fc00000);
  CHECK(w[3] == 0x7f800000);
  CHECK(w[4] == 0xff800000);
  CHECK(w[5] == 0xffc00001);
  std::uint16_t h[2];
  r.read(1, 0, 2, h);
  CHECK(h[0] == 0x2e66);  // 0.1 to binary16: 0.0999755859375
  CHECK(h[1] == 0x7bff);
  std::int64_t i = 0;
  r.read(2, 0, 1, &i);
  CHECK(i == 7);
  unsigned char u[2], b[2];
  r.read(3, 0, 2, u);
  CHECK((u[0] == 0 && u[1] == 255));
  r.read(4, 0, 2, b);
  CHECK((b[0] == 1 && b[1] == 0));
}

TEST_CASE("wavg JSON writer output matches the expected text byte for byte") {
  const std::vector<TensorInfo> tensors{{"a/w", DType::f32, {2}}, {"s", DType::i16, {}}, {"h", DType::f16, {3}}};
  const std::string text = write_json(
      tensors, {raw<float>({0.1f, -1e-30f}), raw<std::int16_t>({-3}), raw<std::uint16_t>({0x2e66, 0x7c00, 0x0001})},
      JsonEncoding::values, {{"wavg_command", "merge"}});
  CHECK(text ==
        "{\"format\": \"wavg-json\", \"version\": 1,\n"
        " \"metadata\": {\n"
        "  \"wavg_command\": \"merge\"\n"
        " },\n"
        " \"tensors\": [\n"
        "  {\"name\": \"a/w\", \"dtype\": \"float32\", \"shape\": [2],\n"
        "   \"data\": [0.1,-1e-30]},\n"  // shortest float32 decimals
        "  {\"name\": \"s\", \"dtype\": \"int16\", \"shape\": [],\n"
        "   \"data\": [-3]},\n"
        "  {\"name\": \"h\", \"dtype\": \"float16\", \"shape\": [3],\n"
        "   \"data\": [0.1,\"Infinity\",6e-08]}\n"  // 0x0001 = 2^-24 = 5.96e-08; 6e-08 is nearest to it
        " ]}\n");
  const std::string b64 =
      write_json({{"x", DType::u8, {4}}}, {std::string("\x01\x02\x03\xff", 4)}, JsonEncoding::base64);
  CHECK(b64 ==
        "{\"format\": \"wavg-json\", \"version\": 1,\n"
        " \"metadata\": {},\n"
        " \"tensors\": [\n"
        "  {\"name\": \"x\", \"dtype\": \"uint8\", \"shape\": [4], \"encoding\": \"base64\", \"data\": \"AQID/w==\"}\n"
        " ]}\n");
}

TEST_CASE("wavg JSON round-trips every dtype bit for bit in both encodings") {
  std::vector<TensorInfo> tensors;
  std::vector<std::string> data;
  // Edge values of every type: extremes, subnormals, signed zeros, NaN payloads, infinities.
  tensors.push_back({"f64", DType::f64, {8}});
  data.push_back(raw<std::uint64_t>({0x0000000000000001, 0x7fefffffffffffff, 0x8000000000000000, 0x3fb999999999999a,
                                     0x7ff8000000000000, 0xfff0000000000001, 0x7ff0000000000000, 0x400921fb54442d18}));
  tensors.push_back({"f32", DType::f32, {7}});
  data.push_back(
      raw<std::uint32_t>({0x00000001, 0x7f7fffff, 0x80000000, 0x3dcccccd, 0x7fc00000, 0x7f800001, 0xff800000}));
  tensors.push_back({"f16", DType::f16, {6}});
  data.push_back(raw<std::uint16_t>({0x0001, 0x7bff, 0x8000, 0x3555, 0x7e01, 0xfc00}));
  tensors.push_back({"bf16", DType::bf16, {6}});
  data.push_back(raw<std::uint16_t>({0x0001, 0x7f7f, 0x8000, 0x3dcd, 0x7fc1, 0x7f80}));
  tensors.push_back({"i8", DType::i8, {2}});
  data.push_back(raw<std::int8_t>({-128, 127}));
  tensors.push_back({"i16", DType::i16, {2}});
  data.push_back(raw<std::int16_t>({-32768, 32767}));
  tensors.push_back({"i32", DType::i32, {2}});
  data.push_back(raw<std::int32_t>({INT32_MIN, INT32_MAX}));
  tensors.push_back({"i64", DType::i64, {2}});
  data.push_back(raw<std::int64_t>({INT64_MIN, INT64_MAX}));
  tensors.push_back({"u8", DType::u8, {2}});
  data.push_back(raw<std::uint8_t>({0, 255}));
  tensors.push_back({"u16", DType::u16, {1}});
  data.push_back(raw<std::uint16_t>({65535}));
  tensors.push_back({"u32", DType::u32, {1}});
  data.push_back(raw<std::uint32_t>({UINT32_MAX}));
  tensors.push_back({"u64", DType::u64, {1}});
  data.push_back(raw<std::uint64_t>({UINT64_MAX}));
  tensors.push_back({"bool", DType::boolean, {2}});
  data.push_back(raw<std::uint8_t>({1, 0}));
  tensors.push_back({"empty", DType::f32, {0, 3}});
  data.push_back("");
  // Every binary16 value, so the shortest-decimal search is checked exhaustively.
  tensors.push_back({"all_f16", DType::f16, {65536}});
  std::string all;
  for (std::uint32_t v = 0; v < 65536; ++v) all += raw<std::uint16_t>({static_cast<std::uint16_t>(v)});
  data.push_back(all);

  for (JsonEncoding enc : {JsonEncoding::values, JsonEncoding::base64}) {
    TempDir dir;
    const std::string path = dir.write("rt.json", write_json(tensors, data, enc));
    JsonReader r(path);
    REQUIRE(r.tensors().size() == tensors.size());
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      CAPTURE(tensors[i].name);
      CHECK(r.tensors()[i].name == tensors[i].name);
      CHECK(r.tensors()[i].dtype == tensors[i].dtype);
      CHECK(r.tensors()[i].shape == tensors[i].shape);
      std::string back(data[i].size(), '\0');
      r.read(i, 0, tensors[i].count(), back.data());
      CHECK(back == data[i]);
    }
  }
}

TEST_CASE("wavg JSON corrupt documents are one-line errors, never crashes") {
  const std::string ok = R"({"name":"w","dtype":"float32","shape":[2],"data":[1,2]})";
  REQUIRE(open_error(doc(ok)).empty());
  const std::string full = doc(ok);
  struct Case {
    std::string text, message;
  };
  const std::vector<Case> cases{
      {"", "expected '{' to open the document (at byte 0)"},
      {full.substr(0, full.size() - 4), "expected ',' or ']' in the data"},  // truncated
      {"[1,2]", "expected '{' to open the document"},                        // bad magic
      {R"({"format":"pytorch","tensors":[]})", "format is not \"wavg-json\""},
      {R"({"format":"wavg-json","version":2,"tensors":[]})", "unsupported version"},
      {R"({"format":"wavg-json"})", "no tensors member"},
      {doc(R"({"name":"w","dtype":"float32","shape":[3],"data":[1,2]})"),
       "w: data has 2 values but shape (3,) holds 3"},
      {doc(R"({"name":"w","dtype":"float32","shape":[1],"data":[1,2]})"), "w: data has more than the 1 values"},
      {doc(R"({"name":"w","dtype":"float32","shape":[4294967296,4294967296],"data":[]})"), "overflows"},
      {doc(R"({"name":"w","dtype":"float32","shape":[1000000000],"data":[]})"),
       "needs more values than the file can hold"},
      {doc(R"({"name":"w","dtype":"uint8","shape":[4],"encoding":"base64","data":"AQID"})"),
       "base64 data is not 4 bytes"},
      {doc(R"({"name":"w","dtype":"float32","shape":[1],"data":["nan"]})"), "w: value 0 is not a float32"},
      {doc(R"({"name":"w","dtype":"int8","shape":[1],"data":[128]})"), "w: value 0 is not a int8"},
      {doc(R"({"name":"w","dtype":"int8","shape":[1],"data":[1.5]})"), "w: value 0 is not a int8"},
      {doc(R"({"name":"w","dtype":"complex64","shape":[1],"data":[1]})"), "unknown dtype complex64"},
      {doc(R"({"name":"w","dtype":"float32","shape":[-1],"data":[1]})"), "shape holds something other than a size"},
      {doc(R"({"data":[1],"name":"w","dtype":"float32","shape":[1]})"), "data comes before its name, dtype and shape"},
      {doc(ok + "," + ok), "the tensor w appears twice"},
      {doc(R"({"name":"w","name":"v","dtype":"float32","shape":[1],"data":[1]})"), "member name twice"},
      {R"({"format":"wavg-json","tensors":[],"tensors":[]})", "the member tensors appears twice"},
      {R"({"format":"wavg-json","metadata":{"a":"1","a":"2"},"tensors":[]})", "metadata has the key a twice"},
      {R"({"format":"wavg-json","metadata":{"a":1},"tensors":[]})", "metadata entry a is not a string"},
      {doc(std::string(R"({"name":"w)") + "\xff" + R"(","dtype":"float32","shape":[1],"data":[1]})"), "invalid UTF-8"},
      {doc(R"({"name":"\ud800","dtype":"float32","shape":[1],"data":[1]})"), "unpaired surrogate"},
      // Nothing is skipped: a member wavg does not read could hold weights (the coverage rule).
      {R"({"format":"wavg-json","x":)" + std::string(100, '[') + std::string(100, ']') + R"(,"tensors":[]})",
       "unexpected member x"},
      {doc(R"({"name":"w","dtype":"float32","shape":[1],"data":[1],"grad":[2]})"), "unexpected member grad"},
      {full + "x", "text after the end of the document"},
      {doc(R"({"name":"w","dtype":"float32","shape":[1],"data":[01]})"), "expected ',' or ']'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text.substr(0, 120));
    const std::string what = open_error(c.text);
    CHECK_MESSAGE(what.find(c.message) != std::string::npos, what);
    CHECK(what.rfind("wavg JSON: ", 0) == 0);
  }
}

TEST_CASE("wavg JSON is recognised by its first member and not by its extension") {
  TempDir dir;
  CHECK(looks_like_wavg_json(dir.write("a.txt", " {\n \"format\" : \"wavg-json\", \"tensors\": []}")));
  CHECK_FALSE(looks_like_wavg_json(dir.write("b.json", R"({"tensors": [], "format": "wavg-json"})")));
  CHECK_FALSE(looks_like_wavg_json(dir.write("c.json", R"({"format": "tfjs", "weightsManifest": []})")));
}

// A data array of more than 1 MiB of text is parsed in pieces on the OpenMP threads: the same values, and a bad value
// anywhere worded as on one thread (the reader parses the array again on one thread to find it).
TEST_CASE("wavg JSON reads a large data array on several threads, its errors worded as on one") {
  const int before = omp_get_max_threads();
  omp_set_num_threads(2);
  constexpr std::uint64_t n = 300'000;
  const auto array = [&](std::uint64_t bad, const std::string& what) {
    std::string s = "[";
    for (std::uint64_t i = 0; i < n; ++i) {
      if (i) s += i % 7 ? "," : ",\n ";
      if (i == bad) {
        s += what;
        continue;
      }
      s += std::to_string(i);
      if (i % 4) s.append(".").append(std::to_string(25 * (i % 4)));
    }
    return s + "]";
  };
  const auto tensor = [&](std::uint64_t count, const std::string& data) {
    return doc(R"({"name":"w","dtype":"float32","shape":[)" + std::to_string(count) + R"(],"data":)" + data + "}");
  };
  TempDir dir;
  const std::string path = dir.write("big.json", tensor(n, array(n, "")));
  JsonReader r(path);
  std::vector<float> got(n);
  r.read(0, 0, n, got.data());
  std::uint64_t wrong = 0;
  for (std::uint64_t i = 0; i < n; ++i) wrong += got[i] != static_cast<float>(i) + 0.25f * static_cast<float>(i % 4);
  CHECK(wrong == 0);
  CHECK(open_error(tensor(n, array(200'000, R"("nan")"))).find("w: value 200000 is not a float32") !=
        std::string::npos);
  CHECK(open_error(tensor(n, array(1'000, R"("a]")"))).find("w: value 1000 is not a float32") != std::string::npos);
  CHECK(open_error(tensor(n + 1, array(n, ""))).find("w: data has 300000 values but shape (300001,) holds 300001") !=
        std::string::npos);
  CHECK(open_error(tensor(n, array(5, "1,2"))).find("w: data has more than the 300000 values") != std::string::npos);
  omp_set_num_threads(before);
}
