// Flax msgpack files: the node list of a buffer annotated byte by byte, the reader's names and pieces on a file
// flax wrote in its chunked form, and the writer's output compared with flax's own bytes (samples/jax, made by
// flax 0.12.8) and with a buffer annotated byte by byte.
#include <doctest/doctest.h>

#include <cstring>

#include "flax/flax.hpp"
#include "support/temp_dir.hpp"
#include "wavg/error.hpp"

using namespace wavg;
using wavg::test::TempDir;

namespace {

const std::string k_samples = WAVG_SAMPLES_DIR "/jax/";

// Copies every tensor of `in` through a writer made by `make`, and returns the file's bytes.
template <typename Make>
std::string rewrite(Reader& in, const OutputSpec& spec, Make&& make) {
  TempDir dir;
  const std::string out = dir.write("out.msgpack", "");
  auto w = make(out, spec);
  for (std::size_t i = 0; i < spec.tensors.size(); ++i) {
    std::vector<unsigned char> buf(spec.tensors[i].bytes());
    // Two blocks, so a write straddles the chunks of a chunked array.
    const std::uint64_t n = spec.tensors[i].count(), half = n / 2, elem = dtype_size(spec.tensors[i].dtype);
    in.read(i, 0, n, buf.data());
    w->write(i, 0, half, buf.data());
    w->write(i, half, n - half, buf.data() + half * elem);
  }
  w->finish();
  return test::read_all(out);
}

}  // namespace

TEST_CASE("msgpack tree: one node per value, payloads as offsets into the buffer") {
  // {"a": [1, -2, 1.5], "b": bin(2)}
  const std::string bytes = std::string("\x82") +
                            "\xa1"
                            "a" +
                            "\x93" + "\x01" + "\xfe" + std::string("\xcb\x3f\xf8\x00\x00\x00\x00\x00\x00", 9) +
                            "\xa1"
                            "b" +
                            "\xc4\x02" + "xy";
  const auto* base = reinterpret_cast<const unsigned char*>(bytes.data());
  const msgpack_tree::Tree t = msgpack_tree::parse("x", base, 0, bytes.size(), "the file");
  REQUIRE(t.nodes.size() == 8);
  CHECK(t.nodes[0].kind == msgpack_tree::Kind::map);
  CHECK(t.nodes[0].count == 2);
  CHECK(t.children(0) == std::vector<std::uint32_t>{1, 2, 6, 7});
  CHECK(t.text(t.nodes[1]) == "a");
  CHECK(t.nodes[2].kind == msgpack_tree::Kind::array);
  CHECK(t.nodes[3].value.u == 1);
  CHECK(t.nodes[4].value.i == -2);
  CHECK(t.nodes[5].value.d == 1.5);
  CHECK(t.nodes[7].kind == msgpack_tree::Kind::bin);
  CHECK(t.nodes[7].at == 19);
  CHECK(t.text(t.nodes[7]) == "xy");
  CHECK_THROWS_WITH_AS(msgpack_tree::parse("x", base, 0, bytes.size() - 1, "the file"),
                       "x: the file: truncated: a value runs past the end (whole up to byte 19)", Error);
}

TEST_CASE("Flax reader: a file flax wrote in its chunked form reads as whole arrays") {
  FlaxReader r(k_samples + "chunked_a.msgpack");
  CHECK(r.layout() == "msgpack state dict, 1 chunked array(s)");
  REQUIRE(r.tensors().size() == 2);
  CHECK(r.tensors()[0].name == "big");
  CHECK(r.tensors()[0].shape == Shape{5, 7});
  CHECK(r.tensors()[1].name == "small");
  CHECK(r.tensors()[1].dtype == DType::f64);
  // flax cut the 35 float32 values into chunks of 64 / 4 = 16: a range inside one chunk may be lent (when
  // aligned), one across two chunks never is.
  CHECK(r.view(0, 14, 4) == nullptr);
}

TEST_CASE("Flax writer: with flax's chunk size it writes the bytes flax wrote") {
  for (const char* name : {"chunked_a.msgpack", "train_a.msgpack", "dtypes_b.msgpack"}) {
    CAPTURE(name);
    FlaxReader in(k_samples + name);
    OutputSpec spec;
    spec.tensors = in.tensors();
    spec.template_input = &in;
    const std::string got = rewrite(in, spec, [](const std::string& out, const OutputSpec& s) {
      return create_flax_writer_chunked(out, out, s, 64);
    });
    CHECK(got == test::read_all(k_samples + name));
  }
}

TEST_CASE("Flax writer: without a Flax input 1, nested maps from the names") {
  FlaxReader in(k_samples + "chunked_a.msgpack");
  OutputSpec spec;
  spec.tensors = {{"m/x", DType::f32, {1}}, {"m/y", DType::f32, {}}, {"z", DType::f32, {1}}};
  TempDir dir;
  const std::string out = dir.write("out.msgpack", "");
  auto w = create_flax_writer(out, out, spec);
  const float v[] = {1.0f};
  for (std::size_t i = 0; i < 3; ++i) w->write(i, 0, 1, v);
  w->finish();
  const std::string f32 =
      "\xa7"
      "float32";
  const std::string one = std::string("\xc4\x04") + std::string("\x00\x00\x80\x3f", 4);
  // ext 8 with a payload of 1 + 2 + 8 + 6 = 17 bytes (an ext 8: no fixext has that length)
  const std::string vec = std::string("\xc7\x11\x01") + "\x93" + "\x91\x01" + f32 + one;
  // a 0-d array: 1 + 1 + 8 + 6 = 16 bytes, a fixext 16 (0xd8)
  const std::string scalar = std::string("\xd8\x01") + "\x93" + "\x90" + f32 + one;
  CHECK(test::read_all(out) == std::string("\x82") +
                                   "\xa1"
                                   "m" +
                                   "\x82" +
                                   "\xa1"
                                   "x" +
                                   vec +
                                   "\xa1"
                                   "y" +
                                   scalar +
                                   "\xa1"
                                   "z" +
                                   vec);
  spec.tensors = {{"m", DType::f32, {1}}, {"m/x", DType::f32, {1}}};
  CHECK_THROWS_WITH_AS(create_flax_writer(out, out, spec), (out + ": m/x: m is an array, so it cannot hold x").c_str(),
                       Error);
}
