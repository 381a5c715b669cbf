// printable(): what every error line and note passes through, so that a name read from a file stays one line and
// cannot drive the terminal. Expected strings written by hand.

#include <doctest/doctest.h>

#include <string>

#include "wavg/error.hpp"

using wavg::printable;

TEST_CASE("printable escapes what could end the line or reach the terminal, and keeps UTF-8 text") {
  CHECK(printable("dense/kernel:0") == "dense/kernel:0");
  CHECK(printable("a\nwavg: error: b") == "a\\nwavg: error: b");
  CHECK(printable("t\tr\r") == "t\\tr\\r");
  CHECK(printable("\x1b[31mred") == "\\x1b[31mred");
  CHECK(printable(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(printable("del\x7f") == "del\\x7f");
  CHECK(printable("back\\slash") == "back\\\\slash");
  CHECK(printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  CHECK(printable("\xc2\x9b"
                  "31m") == "\\xc2\\x9b31m");    // C1 CSI, a terminal escape in UTF-8
  CHECK(printable("\xc2\xa0") == "\xc2\xa0");    // U+00A0, printable
  CHECK(printable("\xff\xfe") == "\\xff\\xfe");  // not UTF-8
  CHECK(printable("\xe2\x82") == "\\xe2\\x82");  // truncated sequence
}

TEST_CASE("clipped keeps a short text whole and cuts a long one at a character, saying its length") {
  CHECK(wavg::clipped("shape (1, 2)", 12) == "shape (1, 2)");
  CHECK(wavg::clipped("shape (1, 2)", 5) == "shape... (12 bytes)");
  // "é" is two bytes: a cut inside it backs up to its start.
  CHECK(wavg::clipped("ab\xc3\xa9z", 3) == "ab... (5 bytes)");
}

TEST_CASE("every Error's message is clipped as it is made: a value from a file keeps the line short") {
  const wavg::Error e(wavg::ExitCode::runtime, "x.npy", "shape (" + std::string(60000, '1') + ")");
  REQUIRE(e.problems().size() == 1);
  CHECK(e.problems()[0].what == "shape (" + std::string(wavg::k_max_message - 7, '1') + "... (60008 bytes)");
  CHECK(std::string(e.what()) == "x.npy: " + e.problems()[0].what);
}
