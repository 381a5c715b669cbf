// Provenance: SHA-256 against the FIPS 180-2 test vectors, XXH3-128 against Python's xxhash module, digests
// kept in input order while hashed on several threads, layout_entries() with the final lengths, and a hashing
// error that reaches entries() naming the file.

#include <doctest/doctest.h>

#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "wavg/error.hpp"
#include "wavg/mapped_file.hpp"
#include "wavg/provenance.hpp"

using namespace wavg;

namespace {
std::string temp_file(const std::string& tag, const std::string& bytes) {
  const std::string path = "/tmp/wavg-test-prov-" + std::to_string(::getpid()) + "-" + tag;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}
}  // namespace

TEST_CASE("SHA-256 of the FIPS 180-2 test vectors") {
  const std::string empty = temp_file("empty", ""), abc = temp_file("abc", "abc"),
                    two_blocks = temp_file("two", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq");
  CHECK(sha256_file(empty) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_file(abc) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_file(two_blocks) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  for (const auto& f : {empty, abc, two_blocks}) std::remove(f.c_str());
  const std::string million = temp_file("million", std::string(1000000, 'a'));
  CHECK(sha256_file(million) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Three million 'a' span three 1 MiB reads (digest from Python's hashlib).
  const std::string three = temp_file("three", std::string(3000000, 'a'));
  CHECK(sha256_file(three) == "2a152c894398719c0570f83fac34ac03a0f6e8e474b995c2403aa5434f7b9dd4");
  std::remove(million.c_str());
  std::remove(three.c_str());
}

TEST_CASE("XXH3-128 in canonical order, as Python's xxhash.xxh3_128_hexdigest() gives it") {
  const std::string empty = temp_file("empty", ""), abc = temp_file("abc", "abc"),
                    three = temp_file("three", std::string(3000000, 'a'));  // three 1 MiB reads
  CHECK(hash_file(HashAlgo::xxh3_128, empty) == "99aa06d3014798d86001c324468d497f");
  CHECK(hash_file(HashAlgo::xxh3_128, abc) == "06b05ab6733a618578af5f94892f3950");
  CHECK(hash_file(HashAlgo::xxh3_128, three) == "9220778898dfe2af488fe7c89469a712");
  for (const auto& f : {empty, abc, three}) std::remove(f.c_str());
}

TEST_CASE("XXH3-128 of a file a reader has mapped is hashed from that mapping, to the same digest") {
  const std::string three = temp_file("three-mapped", std::string(3000000, 'a'));
  {
    const MappedFile engine_view(three);  // as a reader holds it while the engine runs
    REQUIRE(find_mapping(three));
    CHECK(find_mapping(three)->data == engine_view.data());
    CHECK(hash_file(HashAlgo::xxh3_128, three) == "9220778898dfe2af488fe7c89469a712");
  }
  CHECK_FALSE(find_mapping(three));  // the reader's mapping is gone: read with pread() again
  CHECK(hash_file(HashAlgo::xxh3_128, three) == "9220778898dfe2af488fe7c89469a712");
  std::remove(three.c_str());
}

TEST_CASE("the default fingerprint is XXH3-128, recorded under its name; --hash none records the names only") {
  const std::string a = temp_file("a", "abc"), c = temp_file("c", "abc");
  const Provenance p("merge", "mean", InputFiles{{a, c}, {a}}, "");
  const auto entries = p.entries();
  const auto list = nlohmann::json::parse(entries.at("wavg_inputs"));
  REQUIRE(list.size() == 2);
  CHECK(list[0] == nlohmann::json({{"file", a}, {"xxh3_128", "3b3faa148c5f05f1b441a07dd428557b"}}));  // "abcabc"
  CHECK(list[1] == nlohmann::json({{"file", a}, {"xxh3_128", "06b05ab6733a618578af5f94892f3950"}}));
  const auto layout = p.layout_entries();
  CHECK(layout.at("wavg_inputs").size() == entries.at("wavg_inputs").size());
  CHECK(nlohmann::json::parse(layout.at("wavg_inputs"))[0]["xxh3_128"] == std::string(32, '0'));
  const Provenance none("merge", "mean", InputFiles{{a}}, "", HashAlgo::none);
  const auto names_only = nlohmann::json::parse(none.entries().at("wavg_inputs"));
  CHECK(names_only == nlohmann::json::parse(R"([{"file": ")" + a + "\"}]"));
  for (const auto& f : {a, c}) std::remove(f.c_str());
}

TEST_CASE("input digests keep the inputs' order whatever thread hashed them") {
  const std::string a = temp_file("a", "abc"), b = temp_file("b", ""), c = temp_file("c", "abc");
  const Provenance p = make_provenance("merge", "mean", {a, b, c, a}, "float16", HashAlgo::sha256);
  const auto layout = p.layout_entries();
  const auto entries = p.entries();
  REQUIRE(entries.size() == 5);
  CHECK(entries.at("wavg_command") == "merge");
  CHECK(entries.at("wavg_method") == "mean");
  CHECK(entries.at("wavg_out_dtype") == "float16");
  const auto list = nlohmann::json::parse(entries.at("wavg_inputs"));
  REQUIRE(list.size() == 4);
  CHECK(list[0]["sha256"] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(list[1]["sha256"] == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(list[2]["sha256"] == list[0]["sha256"]);
  CHECK(list[1]["file"] == b);  // as given, directories included
  // The layout has the same keys and value lengths, with zeros where the digests go.
  for (const auto& [k, v] : entries) CHECK(layout.at(k).size() == v.size());
  CHECK(nlohmann::json::parse(layout.at("wavg_inputs"))[3]["sha256"] == std::string(64, '0'));
  for (const auto& f : {a, b, c}) std::remove(f.c_str());
}

TEST_CASE("an input of several files (TF.js model.json and shards) has one digest over their concatenation") {
  const std::string a = temp_file("a", "abc"), c = temp_file("c", "abc");
  const Provenance p("merge", "mean", InputFiles{{a, c}, {a}}, "", HashAlgo::sha256);
  const auto list = nlohmann::json::parse(p.entries().at("wavg_inputs"));
  REQUIRE(list.size() == 2);
  CHECK(list[0]["file"] == a);
  CHECK(list[0]["sha256"] == "bbb59da3af939f7af5f360f2ceb80a496e3bae1cd87dde426db0ae40677e1c2c");  // hashlib, "abcabc"
  CHECK(list[1]["sha256"] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  for (const auto& f : {a, c}) std::remove(f.c_str());
}

TEST_CASE("a file that cannot be hashed is an error naming it, raised when the entries are asked for") {
  const Provenance p = make_provenance("merge", "mean", {"/nonexistent/wavg-prov"}, "");
  try {
    (void)p.entries();
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("/nonexistent/wavg-prov") != std::string::npos);
  }
  // Dropped unasked, as when a merge fails before its writer finishes: the destructor stops and joins.
  { const Provenance q = make_provenance("merge", "mean", {"/nonexistent/wavg-prov"}, ""); }
  CHECK(Provenance().entries().empty());
}

TEST_CASE("--hash none reads no input: one that cannot be read is still only named") {
  // The fallback that hashes on the caller's thread when no hash thread started once ran for --hash none too.
  const Provenance p("merge", "mean", InputFiles{{"/nonexistent/wavg-prov"}}, "", HashAlgo::none);
  const auto list = nlohmann::json::parse(p.entries().at("wavg_inputs"));
  CHECK(list == nlohmann::json::parse(R"([{"file": "/nonexistent/wavg-prov"}])"));
}
