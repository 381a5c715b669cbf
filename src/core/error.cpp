#include "wavg/error.hpp"

#include <cstdio>
#include <cstdlib>

namespace wavg {

namespace {
std::string first_line(const std::vector<Problem>& problems) {
  if (problems.empty()) return "unknown error";
  const Problem& p = problems.front();
  return p.file.empty() ? p.what : p.file + ": " + p.what;
}
// Clips every problem's message in place (see clipped()).
std::vector<Problem>& clip(std::vector<Problem>& problems) {
  for (Problem& p : problems)
    if (p.what.size() > k_max_message) p.what = clipped(p.what, k_max_message);
  return problems;
}
}  // namespace

Error::Error(ExitCode code, std::string file, std::string what)
    : Error(code, std::vector<Problem>{{std::move(file), std::move(what)}}) {}

Error::Error(ExitCode code, std::vector<Problem> problems)
    : std::runtime_error(first_line(clip(problems))), m_code(code), m_problems(std::move(problems)) {}

std::string clipped(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;  // a UTF-8 continuation byte
  return std::string(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto hex = [&](unsigned char c) {
    static constexpr char k_digits[] = "0123456789abcdef";
    out += "\\x";
    out += k_digits[c >> 4];
    out += k_digits[c & 15];
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const char* escape = c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : nullptr;
    if (escape) {
      out += escape;
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7f) {
      hex(c);
      ++i;
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    // A UTF-8 sequence is kept whole when it is well formed and not a C1 control (U+0080..U+009F).
    const std::size_t len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    bool ok = len > 0 && text.size() - i >= len &&
              !(c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xa0);
    for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (!ok) {
      hex(c);
      ++i;
      continue;
    }
    out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

void fail(const std::string& file, const std::string& what) { throw Error(ExitCode::runtime, file, what); }

void fail_usage(const std::string& what) { throw Error(ExitCode::usage, "", what); }

void assertion_failed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "wavg: internal error: assertion '%s' failed at %s:%d; please report this bug\n", expr, file,
               line);
  std::abort();
}

}  // namespace wavg
