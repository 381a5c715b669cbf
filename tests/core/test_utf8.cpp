// UTF-8 well-formedness against RFC 3629's table, byte sequences written by hand.

#include <doctest/doctest.h>

#include <string>

#include "wavg/utf8.hpp"

namespace {

bool valid(const std::string& bytes) {
  return wavg::valid_utf8(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

}  // namespace

TEST_CASE("well-formed UTF-8 of every length is accepted") {
  CHECK(valid(""));
  CHECK(valid("plain ASCII"));
  CHECK(valid("\xc3\xa9"));          // U+00E9
  CHECK(valid("\xe2\x82\xac"));      // U+20AC
  CHECK(valid("\xf0\x9f\x98\x80"));  // U+1F600
  CHECK(valid("\xf4\x8f\xbf\xbf"));  // U+10FFFF, the last code point
  CHECK(wavg::utf8_sequence_length(reinterpret_cast<const unsigned char*>("\xf0\x9f\x98\x80"), 4) == 4);
}

TEST_CASE("overlong forms, surrogates, code points past U+10FFFF and cut sequences are refused") {
  CHECK_FALSE(valid("\xc0\x80"));          // overlong U+0000
  CHECK_FALSE(valid("\xe0\x80\xaf"));      // overlong '/'
  CHECK_FALSE(valid("\xed\xa0\x80"));      // U+D800, a surrogate
  CHECK_FALSE(valid("\xf4\x90\x80\x80"));  // U+110000
  CHECK_FALSE(valid("\xe2\x82"));          // cut short
  CHECK_FALSE(valid("\x80"));              // a lone continuation byte
  CHECK_FALSE(valid("\xff"));
  CHECK_FALSE(valid("ok\xc3"));
}
