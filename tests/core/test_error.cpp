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
