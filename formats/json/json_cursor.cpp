// The JSON tokenizer of wavg JSON (json_text.hpp): a streaming cursor that never builds a DOM.

#include <cstring>

#include "json/json_text.hpp"
#include "wavg/error.hpp"
#include "wavg/utf8.hpp"

namespace wavg::json {

namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

}  // namespace

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void Cursor::error(const std::string& what) const {
  fail(m_path, "wavg JSON: " + what + " (at byte " + std::to_string(offset()) + ")");
}

char Cursor::peek() {
  while (m_at < m_end && is_ws(*m_at)) ++m_at;
  return m_at < m_end ? *m_at : '\0';
}

void Cursor::expect(char c, const char* what) {
  if (peek() != c) error(std::string("expected ") + what);
  ++m_at;
}

bool Cursor::consume(char c) {
  if (peek() != c) return false;
  ++m_at;
  return true;
}

bool Cursor::next_item(char close, bool& first) {
  if (first) {
    first = false;
    return !consume(close);
  }
  if (consume(',')) return true;
  if (close == ']')
    expect(']', "',' or ']'");
  else
    expect('}', "',' or '}'");
  return false;
}

void Cursor::expect_end() {
  if (peek() != '\0') error("text after the end of the document");
}

std::string Cursor::string() {
  expect('"', "a string");
  std::string out;
  for (;;) {
    // Copy the plain run in one go: the common case for names and base64.
    const char* run = m_at;
    while (m_at < m_end && *m_at != '"' && *m_at != '\\' && static_cast<unsigned char>(*m_at) >= 0x20 &&
           static_cast<unsigned char>(*m_at) < 0x80)
      ++m_at;
    out.append(run, m_at);
    if (m_at == m_end) error("unterminated string");
    const unsigned char c = static_cast<unsigned char>(*m_at);
    if (c == '"') {
      ++m_at;
      return out;
    }
    if (c < 0x20) error("control character in a string");
    if (c >= 0x80) {
      const std::size_t len = utf8_sequence_length(reinterpret_cast<const unsigned char*>(m_at), remaining());
      if (len == 0) error("invalid UTF-8 in a string");
      out.append(m_at, len);
      m_at += len;
      continue;
    }
    // An escape.
    if (remaining() < 2) error("unterminated string");
    const char e = m_at[1];
    m_at += 2;
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        auto hex4 = [&]() -> std::uint32_t {
          if (remaining() < 4) error("truncated \\u escape");
          std::uint32_t v = 0;
          for (int i = 0; i < 4; ++i) {
            const int h = hex_value(m_at[i]);
            if (h < 0) error("bad \\u escape");
            v = (v << 4) | static_cast<std::uint32_t>(h);
          }
          m_at += 4;
          return v;
        };
        std::uint32_t cp = hex4();
        if (cp >= 0xdc00 && cp <= 0xdfff) error("unpaired surrogate in a string");
        if (cp >= 0xd800 && cp <= 0xdbff) {
          if (remaining() < 2 || m_at[0] != '\\' || m_at[1] != 'u') error("unpaired surrogate in a string");
          m_at += 2;
          const std::uint32_t lo = hex4();
          if (lo < 0xdc00 || lo > 0xdfff) error("unpaired surrogate in a string");
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        }
        append_utf8(out, cp);
        break;
      }
      default: error("bad escape in a string");
    }
  }
}

std::string_view Cursor::number() {
  peek();
  const char* start = m_at;
  const char* p = m_at;
  if (p < m_end && *p == '-') ++p;
  if (p == m_end || !is_digit(*p)) error("expected a number");
  if (*p == '0')
    ++p;
  else
    while (p < m_end && is_digit(*p)) ++p;
  if (p < m_end && *p == '.') {
    ++p;
    if (p == m_end || !is_digit(*p)) error("bad number");
    while (p < m_end && is_digit(*p)) ++p;
  }
  if (p < m_end && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p < m_end && (*p == '+' || *p == '-')) ++p;
    if (p == m_end || !is_digit(*p)) error("bad number");
    while (p < m_end && is_digit(*p)) ++p;
  }
  m_at = p;
  return {start, static_cast<std::size_t>(p - start)};
}

void Cursor::literal(std::string_view word) {
  if (remaining() < word.size() || std::memcmp(m_at, word.data(), word.size()) != 0)
    error("expected " + std::string(word));
  m_at += word.size();
}

bool Cursor::boolean() {
  const char c = peek();
  if (c == 't') {
    literal("true");
    return true;
  }
  if (c == 'f') {
    literal("false");
    return false;
  }
  error("expected true or false");
}

}  // namespace wavg::json
