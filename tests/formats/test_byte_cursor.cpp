// The shared byte cursor and varint decoder (formats/common/byte_cursor.hpp): varints as protobuf's encoding guide
// spells them byte by byte, the longest and the overflowing ones, and reads checked against the end.
#include <doctest/doctest.h>

#include <string>

#include "common/byte_cursor.hpp"

using namespace wavg;

namespace {

// Decodes `bytes` as one varint; returns whether it decoded and how many bytes it took.
bool decode(const std::string& bytes, std::uint64_t& v, std::size_t& used) {
  const auto* begin = reinterpret_cast<const unsigned char*>(bytes.data());
  const unsigned char* p = begin;
  const bool ok = decode_varint(p, begin + bytes.size(), v);
  used = static_cast<std::size_t>(p - begin);
  return ok;
}

}  // namespace

TEST_CASE("varints decode as protobuf spells them") {
  std::uint64_t v = 0;
  std::size_t used = 0;
  CHECK((decode(std::string("\x01", 1), v, used) && v == 1 && used == 1));
  CHECK((decode(std::string("\x96\x01", 2), v, used) && v == 150 && used == 2));  // the encoding guide's 150
  CHECK((decode(std::string("\xac\x02\xff", 3), v, used) && v == 300 && used == 2));
  CHECK((decode(std::string("\x80\x00", 2), v, used) && v == 0 && used == 2));  // padded: valid wire format
  // 2^64 - 1: nine bytes of 0xff, then bit 63 alone in the tenth.
  CHECK((decode(std::string(9, '\xff') + "\x01", v, used) && v == ~0ull && used == 10));
  CHECK((decode(std::string(9, '\x80') + "\x01", v, used) && v == 1ull << 63));
}

TEST_CASE("varints that overflow, run on past ten bytes or past the end are refused, the cursor unmoved") {
  std::uint64_t v = 7;
  std::size_t used = 99;
  CHECK(!decode(std::string(9, '\xff') + "\x02", v, used));  // bit 64
  CHECK(used == 0);
  CHECK(v == 7);
  CHECK(!decode(std::string(9, '\x80') + "\x7f", v, used));
  CHECK(!decode(std::string(10, '\x80') + "\x00", v, used));  // eleven bytes
  CHECK(!decode(std::string("\x80\x80", 2), v, used));        // ends inside
  CHECK(!decode("", v, used));
}

TEST_CASE("the cursor reads little-endian words and text, and names what runs past the end") {
  const std::string file = "f.bin";
  const std::string bytes(
      "\x34\x12\x78\x56\x34\x12"
      "ab\x96\x01",
      10);
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  ByteCursor c(file, data, bytes.size());
  CHECK(c.le(2) == 0x1234);
  CHECK(c.take<std::uint32_t>("word") == 0x12345678u);
  CHECK(c.text(2) == "ab");
  std::uint64_t v = 0;
  CHECK((c.varint(v) && v == 150));
  CHECK(c.left() == 0);
  try {
    c.take<std::uint16_t>("the count");
    FAIL("read past the end");
  } catch (const Error& e) {
    CHECK(e.problems().at(0).file == "f.bin");
    CHECK(e.problems().at(0).what == "truncated: the count at byte 10 needs 2 bytes, 0 left");
  }
  // A cursor's own overrun wording, and the `what` it was made with.
  ByteCursor z(file, data, 4, 2, "the end record", [](const ByteCursor& at, std::uint64_t, const std::string& w) {
    throw Error(ExitCode::runtime, at.file(), "past: " + w);
  });
  CHECK(z.le(2) == 0x5678);
  CHECK_THROWS_WITH_AS(z.skip(1), "f.bin: past: the end record", Error);
}
