// TensorFlow checkpoints: CRC-32C against published check values (RFC 3720 B.4 and the CRC catalogue), output
// names, the writer's path for blocks that arrive out of order, and a real TF2 checkpoint (TensorFlow Serving's
// half_plus_two: a = 0.5, b = 2, c = 3, and its object graph) read by prefix. The CLI tests cover the rest.
#include <doctest/doctest.h>

#include <filesystem>
#include <numeric>

#include "support/temp_dir.hpp"
#include "tensorflow/crc32c.hpp"
#include "tensorflow/tensorflow.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/error.hpp"

using namespace wavg;
using wavg::test::TempDir;

TEST_CASE("crc32c matches the published check values, in one call or many, with or without SSE 4.2") {
  for (auto* extend : {&crc32c::extend, &crc32c::extend_tables}) {
    const std::string digits = "123456789";
    CHECK(extend(0, digits.data(), digits.size()) == 0xe3069283u);
    std::vector<unsigned char> bytes(32, 0);
    CHECK(extend(0, bytes.data(), bytes.size()) == 0x8a9136aau);
    std::fill(bytes.begin(), bytes.end(), 0xff);
    CHECK(extend(0, bytes.data(), bytes.size()) == 0x62a8ab43u);
    std::iota(bytes.begin(), bytes.end(), 0);
    CHECK(extend(0, bytes.data(), bytes.size()) == 0x46dd794eu);
    CHECK(extend(extend(0, bytes.data(), 13), bytes.data() + 13, 19) == 0x46dd794eu);
  }
  CHECK(crc32c::unmask(crc32c::mask(0x46dd794eu)) == 0x46dd794eu);
  CHECK(crc32c::mask(0) == 0xa282ead8u);  // LevelDB's mask delta
}

TEST_CASE("crc32c: the three-stream instruction path equals the tables at every length, start and alignment") {
  // Lengths either side of the 3 x 256 and 3 x 8192 blocks the streams take, at odd offsets, continued from a CRC.
  std::vector<unsigned char> bytes(3 * 8192 * 2 + 3 * 256 + 41);
  std::uint32_t x = 12345;
  for (auto& b : bytes) b = static_cast<unsigned char>((x = x * 1103515245u + 12345u) >> 24);
  for (const std::size_t n : {0, 1, 7, 8, 767, 768, 769, 24575, 24576, 24577, 24576 + 768 + 9, 49152 + 800}) {
    for (const std::size_t at : {0, 3}) {
      CHECK(crc32c::extend(0, bytes.data() + at, n) == crc32c::extend_tables(0, bytes.data() + at, n));
      const std::uint32_t from = 0xdeadbeefu;
      CHECK(crc32c::extend(from, bytes.data() + at, n) == crc32c::extend_tables(from, bytes.data() + at, n));
    }
  }
  // RFC 3720 B.4: 32 bytes descending 31..0.
  for (std::size_t i = 0; i < 32; ++i) bytes[i] = static_cast<unsigned char>(31 - i);
  CHECK(crc32c::extend(0, bytes.data(), 32) == 0x113fdb5cu);
}

TEST_CASE("tensorflow output names: .ckpt, .ckpt-N and .index say TensorFlow, other names do not") {
  CHECK(is_tensorflow_output_name("avg.ckpt"));
  CHECK(is_tensorflow_output_name("run/model.ckpt-1000"));
  CHECK(is_tensorflow_output_name("variables/variables.index"));
  CHECK_FALSE(is_tensorflow_output_name("ckpt-3"));
  CHECK_FALSE(is_tensorflow_output_name("model.ckpt-"));
  CHECK_FALSE(is_tensorflow_output_name("model.ckpt-1a"));
  CHECK_FALSE(is_tensorflow_output_name("model.h5"));
  CHECK(tensorflow_index_path("avg.ckpt") == "avg.ckpt.index");
  CHECK(tensorflow_index_path("avg.ckpt.index") == "avg.ckpt.index");
}

TEST_CASE("tensorflow writer: blocks written out of order still get the right crc32c") {
  TempDir dir;
  const std::string prefix = dir / "out";
  OutputSpec spec;
  spec.tensors = {{"w", DType::f32, {6}}, {"n", DType::i64, {}}};
  const std::vector<float> w{1, 2, 3, 4, 5, 6};
  const std::int64_t n = 42;
  {
    AtomicFile out(prefix + ".index", Overwrite::no);
    {
      auto writer = create_tensorflow_writer(out.tmp_path(), prefix + ".index", spec);
      writer->write(0, 4, 2, w.data() + 4);
      writer->write(1, 0, 1, &n);
      writer->write(0, 0, 4, w.data());
      writer->finish();
    }
    out.commit();
  }
  CHECK(std::filesystem::file_size(prefix + ".data-00000-of-00001") == 6 * 4 + 8);
  TensorflowReader r(prefix);  // verifies every tensor's crc32c
  REQUIRE(r.tensors().size() == 2);
  CHECK(r.tensors()[0].name == "n");  // key order
  CHECK(r.tensors()[1].shape == Shape{6});
  std::vector<float> got(6);
  r.read(1, 0, 6, got.data());
  CHECK(got == w);
  std::int64_t m = 0;
  r.read(0, 0, 1, &m);
  CHECK(m == 42);
  CHECK(r.layout() == "TF1 name-based checkpoint");
}

TEST_CASE("tensorflow reads a real TF2 checkpoint by prefix, its object graph kept aside") {
  const std::string prefix =
      std::string(WAVG_SHARED_DIR) + "/real-checkpoints/tfserving-half-plus-two-tf2-cpu/variables";
  if (!std::filesystem::exists(prefix + ".index")) {
    MESSAGE("skipped: ../shared/real-checkpoints is absent");
    return;
  }
  TensorflowReader r(prefix);
  CHECK(r.format_name() == "TensorFlow checkpoint");
  CHECK(r.layout() == "TF2 object-based checkpoint");
  REQUIRE(r.tensors().size() == 3);
  const float want[] = {0.5f, 2.0f, 3.0f};
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(r.tensors()[i].name == std::string(1, static_cast<char>('a' + i)) + "/.ATTRIBUTES/VARIABLE_VALUE");
    float v = 0;
    r.read(i, 0, 1, &v);
    CHECK(v == want[i]);
  }
  REQUIRE(r.string_tensors().size() == 1);
  CHECK(r.string_tensors()[0].name == "_CHECKPOINTABLE_OBJECT_GRAPH");
  CHECK(r.string_tensors()[0].stored.size == 619);
  CHECK(r.files().size() == 2);
}
