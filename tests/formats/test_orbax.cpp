// Orbax checkpoints: folders orbax-checkpoint 0.12.8 wrote (tests/orbax, made by make_orbax.py; every value a closed
// form) read in all three storage modes, arrays written by two devices assembled from their chunks, other zarr
// compressors, and the OCDBT decoder's refusals on byte-annotated buffers.
#include <doctest/doctest.h>

#include <cstring>

#include "orbax/ocdbt.hpp"
#include "orbax/orbax.hpp"
#include "orbax/zarr.hpp"
#include "tensorflow/crc32c.hpp"
#include "wavg/error.hpp"

using namespace wavg;

namespace {

const std::string k_dir = WAVG_ORBAX_DIR "/";

std::vector<double> values(Reader& r, std::size_t index, std::uint64_t block = 5) {
  const TensorInfo& t = r.tensors()[index];
  std::vector<double> out;
  std::vector<unsigned char> buf(t.bytes());
  // Odd blocks, so that reads cross chunk and row boundaries.
  for (std::uint64_t at = 0; at < t.count(); at += block)
    r.read(index, at, std::min(block, t.count() - at), buf.data() + at * dtype_size(t.dtype));
  for (std::uint64_t i = 0; i < t.count(); ++i) {
    if (t.dtype == DType::f32) {
      float f;
      std::memcpy(&f, buf.data() + 4 * i, 4);
      out.push_back(f);
    } else if (t.dtype == DType::i64) {  // a Python int leaf (step)
      std::int64_t v;
      std::memcpy(&v, buf.data() + 8 * i, 8);
      out.push_back(static_cast<double>(v));
    } else {
      REQUIRE(t.dtype == DType::i32);
      std::int32_t v;
      std::memcpy(&v, buf.data() + 4 * i, 4);
      out.push_back(v);
    }
  }
  return out;
}

// make_orbax.py's TrainState K: float leaf L (in tree order) holds K/4 + L/8 + i/16; count 10K; step 100K.
void check_train_state(const std::string& folder, int k) {
  orbax::OrbaxReader r(folder);
  REQUIRE(r.tensors().size() == 22);
  CHECK(r.kept_entries() == std::vector<std::string>{"opt_state/1 (None, input 1's)"});
  int leaf = 0;
  for (std::size_t t = 0; t < r.tensors().size(); ++t) {
    const TensorInfo& info = r.tensors()[t];
    const std::vector<double> v = values(r, t);
    CAPTURE(info.name);
    if (info.name == "step") {
      CHECK(v == std::vector<double>{100.0 * k});
      CHECK(info.role == Role::counter);  // TrainState.step
    } else if (info.name == "opt_state/0/count") {
      CHECK(v == std::vector<double>{10.0 * k});
      CHECK(info.role == Role::counter);
    } else {
      for (std::size_t i = 0; i < v.size(); ++i) CHECK(v[i] == k / 4.0 + leaf / 8.0 + static_cast<double>(i) / 16.0);
      ++leaf;
    }
  }
  CHECK(leaf == 20);
  const auto role = [&](const std::string& name) {
    for (const TensorInfo& t : r.tensors())
      if (t.name == name) return t.role;
    FAIL("no tensor " << name);
    return Role::unknown;
  };
  CHECK(role("params/Dense_0/kernel") == Role::weight);
  CHECK(role("batch_stats/BatchNorm_0/mean") == Role::buffer);
  CHECK(role("opt_state/0/mu/Dense_0/kernel") == Role::optimizer_state);
  CHECK(r.tensors()[4].shape == Shape{4, 3});
}

void le(std::string& s, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s += static_cast<char>(v >> (8 * i));
}

// The OCDBT envelope (ocdbt.hpp) around an uncompressed body: magic (big-endian), length, version 0, compression 0,
// the body, CRC-32C.
std::string envelope(std::uint32_t magic, const std::string& body) {
  std::string s;
  for (int i = 3; i >= 0; --i) s += static_cast<char>(magic >> (8 * i));
  le(s, 4 + 8 + 2 + body.size() + 4, 8);
  s += std::string("\0\0", 2) + body;
  le(s, crc32c::extend(0, s.data(), s.size()), 4);
  return s;
}

std::span<const unsigned char> bytes_of(const std::string& s) {
  return {reinterpret_cast<const unsigned char*>(s.data()), s.size()};
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.problems().front().what;
  }
  return "";
}

}  // namespace

TEST_CASE("orbax: a TrainState read in every storage mode orbax writes") {
  check_train_state(k_dir + "train_1", 1);  // OCDBT (per-process stores merged), zarr v2, zstd
  check_train_state(k_dir + "zarr2_2", 2);  // per-leaf zarr v2 folders
  check_train_state(k_dir + "zarr3_3", 3);  // per-leaf zarr v3, sharding_indexed
  orbax::OrbaxReader r(k_dir + "train_1");
  CHECK(r.layout() == "OCDBT store, zarr v2, zstd");
  CHECK(orbax::OrbaxReader(k_dir + "zarr3_3").layout() == "per-leaf folders, zarr v3, zstd");
}

TEST_CASE("orbax: arrays written by two devices are assembled from their chunks") {
  for (const char* folder : {"sharded", "sharded_zarr3"}) {
    CAPTURE(folder);
    orbax::OrbaxReader r(k_dir + folder);
    REQUIRE(r.tensors().size() == 2);
    for (std::size_t t = 0; t < 2; ++t) {
      CHECK(r.tensors()[t].shape == Shape{8, 4});
      for (std::uint64_t block : {1, 3, 7, 32}) {
        const std::vector<double> v = values(r, t, block);
        for (std::size_t i = 0; i < v.size(); ++i) CHECK(v[i] == static_cast<double>(i));
      }
    }
    CHECK(r.leaves()[0].array.chunk != r.leaves()[0].array.shape);  // really in two chunks
  }
}

TEST_CASE("orbax: zarr chunks compressed with gzip, blosc and zstd") {
  orbax::OrbaxReader r(k_dir + "codecs");
  REQUIRE(r.tensors().size() == 3);
  for (std::size_t t = 0; t < 3; ++t) {
    CAPTURE(r.tensors()[t].name);
    if (r.leaves()[t].array.compression == orbax::Compression::blosc && !orbax::have_blosc()) continue;
    const std::vector<double> v = values(r, t);
    for (std::size_t i = 0; i < v.size(); ++i) CHECK(v[i] == static_cast<double>(i) / 4.0);
  }
  CHECK(r.layout() == "per-leaf folders, zarr v2, blosc, gzip, zstd");
}

TEST_CASE("ocdbt: the envelope's magic, length, CRC and compression are checked") {
  const std::string body = "hello";
  const std::string good = envelope(0x0cdb20de, body);
  CHECK(orbax::ocdbt_body("f", "node", 0x0cdb20de, bytes_of(good), 100) == body);
  CHECK(refusal([&] { orbax::ocdbt_body("f", "node", 0x0cdb3a2a, bytes_of(good), 100); }) ==
        "node: magic 0x0cdb20de where 0x0cdb3a2a belongs");
  std::string flipped = good;
  flipped[15] ^= 1;
  CHECK(refusal([&] { orbax::ocdbt_body("f", "node", 0x0cdb20de, bytes_of(flipped), 100); }) ==
        "node: its CRC-32C does not match (corrupt)");
  CHECK(refusal([&] { orbax::ocdbt_body("f", "node", 0x0cdb20de, bytes_of(good.substr(0, 10)), 100); }) ==
        "node: 10 bytes, too short");
  CHECK(refusal([&] { orbax::ocdbt_body("f", "node", 0x0cdb20de, bytes_of(good), 4); }) ==
        "node: a body of 5 bytes, above its limit");
}

TEST_CASE("ocdbt: a B+tree leaf node decoded, and its hostile variants refused") {
  // A leaf node: height 0; a data file table of one file "d/x" (prefix none, suffix 3, base 2); two entries; key
  // prefix 1 ("a" shared); suffix lengths 2, 1: keys "ab", "ac"; value lengths 3, 4; kinds inline, out of line;
  // the out-of-line value in file 0 at offset 9; the inline value "xyz".
  const auto node = [](const std::string& path, char second_suffix) {
    std::string b;
    b += '\0';
    b += std::string("\x01\x03\x02", 3) + path;
    b += '\x02';
    b += std::string("\x01\x02\x01", 3) + "ab" + second_suffix;
    b += std::string("\x03\x04\x00\x01\x00\x09", 6) + "xyz";
    return envelope(0x0cdb20de, b);
  };
  orbax::OcdbtRoot root;
  root.file = "root";
  root.length = node("d/x", 'c').size();
  const auto keys = [&](const std::string& encoded) {
    return orbax::ocdbt_keys("db", root, [&](const std::string& p, std::uint64_t o, std::uint64_t l) {
      REQUIRE(p == "root");
      REQUIRE(o + l <= encoded.size());
      return bytes_of(encoded).subspan(o, l);
    });
  };
  const std::string good = node("d/x", 'c');
  const orbax::OcdbtKeys k = keys(good);
  REQUIRE(k.size() == 2);
  CHECK(k.at("ab").bytes == "xyz");
  CHECK(k.at("ac").file == "d/x");
  CHECK(k.at("ac").offset == 9);
  CHECK(k.at("ac").length == 4);
  CHECK(refusal([&] { keys(node("d/x", 'a')); }) == "the B+tree node at root:0: its keys are out of order");
  CHECK(refusal([&] { keys(node("../", 'c')); }) == "the B+tree node at root:0: data file path '../' leaves the folder");
  root.height = 1;
  CHECK(refusal([&] { keys(good); }) == "the B+tree node at root:0: height 0 where its parent says 1");
}

std::string varint(std::uint64_t v) {
  std::string s;
  for (; v >= 0x80; v >>= 7) s += static_cast<char>(0x80 | (v & 0x7f));
  return s + static_cast<char>(v);
}

TEST_CASE("ocdbt: a tree made to exhaust memory or time is refused before the work") {
  const auto walk = [](const std::string& file, const orbax::OcdbtRoot& root) {
    return refusal([&] {
      orbax::ocdbt_keys("db", root, [&](const std::string&, std::uint64_t o, std::uint64_t l) {
        REQUIRE(o + l <= file.size());
        return bytes_of(file).subspan(o, l);
      });
    });
  };
  SUBCASE("keys that each extend the one before: their bytes grow as the square of the count") {
    // 20,000 keys of 1, 2, ... 20,000 bytes: 200 MB of keys from a node of about 100 KB.
    const std::uint64_t n = 20000;
    std::string b = std::string("\0\0", 2) + varint(n);  // height 0, no data file, n entries
    for (std::uint64_t i = 1; i < n; ++i) b += varint(i);  // key i shares all of key i - 1
    b += std::string(n, '\x01') + std::string(n, 'a');     // and adds one byte
    b += std::string(2 * n, '\0');                          // values: empty and inline
    orbax::OcdbtRoot root;
    root.max_node_bytes = 8u << 20;  // tensorstore's default
    const std::string file = envelope(0x0cdb20de, b);
    root.length = file.size();
    const std::string why = walk(file, root);
    CAPTURE(why);
    CHECK(why.starts_with("the B+tree node at :0: its keys take "));
  }
  SUBCASE("a node reached from two parents' entries is walked once") {
    // A leaf holding key "k", then an interior node whose two entries "a" and "b" both point at it: before, the
    // leaf was decoded once per entry (so a million entries decoded one leaf a million times).
    const std::string leaf = envelope(0x0cdb20de, std::string("\0\0\x01\x01k\0\0", 7));
    std::string b = std::string("\x01\x01\x04\x00root", 8);  // height 1, one data file "root"
    b += "\x02" + std::string("\0\x01\x01\x01\x01", 5) + "ab";  // keys "a", "b", each its child's prefix
    b += std::string("\0\0\0\0", 4) + varint(leaf.size()) + varint(leaf.size()) + std::string(6, '\0');
    const std::string interior = envelope(0x0cdb20de, b);
    orbax::OcdbtRoot root;
    root.file = "root";
    root.offset = leaf.size();
    root.length = interior.size();
    root.height = 1;
    CHECK(walk(leaf + interior, root) == "the B+tree node at root:0 is reached a second time (a B+tree node has one parent)");
  }
}

TEST_CASE("zarr: metadata refused where wavg cannot read the chunks") {
  const auto refused = [](const std::string& text, int format) {
    return refusal([&] { orbax::parse_zarr("z", text, format); });
  };
  CHECK(refused(R"({"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": ">f4", "compressor": null})", 2) ==
        "big-endian data ('>f4') are not supported");
  CHECK(refused(R"({"zarr_format": 2, "shape": [2], "chunks": [0], "dtype": "<f4", "compressor": null})", 2) ==
        "a chunk dimension is 0");
  CHECK(refused(R"({"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "<f4", "compressor": {"id": "lzma"}})",
                2) == "compressor 'lzma' is not one wavg reads (zstd, gzip, zlib, blosc)");
  CHECK(refused(R"({"zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "float32", "chunk_grid":
      {"name": "regular", "configuration": {"chunk_shape": [2]}}, "codecs": [{"name": "transpose"}]})",
                3) == "a transposed array (codec transpose) is not supported");
  const orbax::ZarrArray a = orbax::parse_zarr(
      "z", R"({"zarr_format": 2, "shape": [5, 3], "chunks": [2, 3], "dtype": "<i4", "compressor": null,
      "fill_value": 7})",
      2);
  CHECK(orbax::chunk_grid(a) == Shape{3, 1});
  CHECK(orbax::chunk_key(a, {2, 0}) == "2.0");
  std::int32_t fill;
  std::memcpy(&fill, a.fill.data(), 4);
  CHECK(fill == 7);
}
