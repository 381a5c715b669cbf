#pragma once
// The text layer of wavg JSON: a streaming cursor over JSON text that never builds a DOM (json_cursor.cpp), the
// lossless decimal form of every element type (json_numbers.cpp), and base64 (json_base64.cpp). Kept apart from the
// codec so the reader is a walk over the document's structure and nothing else.

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "wavg/dtype.hpp"

namespace wavg::json {

// Walks JSON text (RFC 8259) one token at a time. Every error names the file and the byte offset. Strings are
// checked for well-formed UTF-8 and unpaired surrogates. It never recurses: the reader accepts only the
// format's own members, so hostile nesting is refused at its first unexpected member, never walked.
class Cursor {
 public:
  Cursor(const char* begin, const char* end, const std::string& path)
      : m_begin(begin), m_at(begin), m_end(end), m_path(path) {}

  // Skips whitespace and returns the next character, or '\0' at the end of the text.
  char peek();
  // Consumes `c` (after whitespace) or fails naming `what` was expected.
  void expect(char c, const char* what);
  // Consumes `c` (after whitespace) if it is next.
  bool consume(char c);
  // Steps through the items of an object or array whose opening bracket was consumed: returns true while another
  // item follows (consuming the ',' between items), false once `close` is consumed. `first` starts true.
  bool next_item(char close, bool& first);
  // Reads a string token and returns its decoded UTF-8 value.
  std::string string();
  // Reads an object member's key and the ':' after it; a key already in `seen` is an error, worded
  // `twice_before` KEY `twice_after`.
  std::string key(std::set<std::string>& seen, const std::string& twice_before, const std::string& twice_after) {
    std::string k = string();
    if (!seen.insert(k).second) error(twice_before + k + twice_after);
    expect(':', "':'");
    return k;
  }
  // Reads a number token and returns its text, validated against the JSON grammar.
  std::string_view number();
  // Reads `true` or `false`.
  bool boolean();
  // Fails unless only whitespace is left.
  void expect_end();

  std::size_t offset() const { return static_cast<std::size_t>(m_at - m_begin); }
  // The unread text, and a jump forward within it (to the end of a span another cursor has read).
  const char* position() const { return m_at; }
  const char* end() const { return m_end; }
  void jump(const char* to) { m_at = to; }
  std::size_t remaining() const { return static_cast<std::size_t>(m_end - m_at); }
  // Throws Error (exit 1): "FILE: wavg JSON: what (at byte N)".
  [[noreturn]] void error(const std::string& what) const;

 private:
  void literal(std::string_view word);

  const char* m_begin;
  const char* m_at;
  const char* m_end;
  const std::string& m_path;
};

// Appends the shortest decimal that reads back as `bits` under the reading rule of SPEC.md (decimal correctly
// rounded to binary64, then rounded to nearest-even to the element type), or a string for NaN and infinities.
void append_float(std::string& out, DType t, const void* element);
// Parses a number token (or "NaN", "Infinity", "-Infinity", "NaN:0x...") into one element of float type `t`.
// Returns false when the text is not a value of that type.
bool parse_float_number(std::string_view text, DType t, void* element);
bool parse_float_string(std::string_view text, DType t, void* element);
// Parses an integer token into one element of integer type `t`; false if not an integer or out of range.
bool parse_integer(std::string_view text, DType t, void* element);
// Appends one integer element of type `t` in decimal.
void append_integer(std::string& out, DType t, const void* element);

// Returns the value of a hexadecimal digit, or -1.
int hex_value(char c);

// Standard base64 (RFC 4648, with padding).
void append_base64(std::string& out, const unsigned char* data, std::size_t size);
// Decodes `text` into `out` (exactly `size` bytes expected); false if malformed or of another length.
bool decode_base64(std::string_view text, unsigned char* out, std::size_t size);

}  // namespace wavg::json
