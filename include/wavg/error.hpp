#pragma once
// Two kinds of failure. wavg::Error is what the user can fix: it names the file and says what is wrong, and carries
// the documented exit code. WAVG_ASSERT is for our own bugs and stays on in release builds. One catch in main()
// prints every problem as `wavg: error: FILE: what` and exits with the error's code.

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace wavg {

// The documented exit codes (README, wavg(1)).
enum class ExitCode : int { success = 0, runtime = 1, usage = 2, incompatible = 3, interrupted = 130 };

// One thing wrong with one file; `file` may be empty for problems that belong to no file (a usage error).
struct Problem {
  std::string file;
  std::string what;
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, std::string file, std::string what);
  Error(ExitCode code, std::vector<Problem> problems);

  ExitCode code() const { return m_code; }
  const std::vector<Problem>& problems() const { return m_problems; }

 private:
  ExitCode m_code;
  std::vector<Problem> m_problems;
};

// Throws a runtime error (exit 1) about `file`.
[[noreturn]] void fail(const std::string& file, const std::string& what);
// Throws a usage error (exit 2).
[[noreturn]] void fail_usage(const std::string& what);

// Returns `text` fit for one line of a terminal: control characters (C0, DEL, C1), backslashes and bytes that are
// not UTF-8 become escapes (\n, \t, \x1b, \\), so a name read from a file can neither end the line nor drive
// the terminal. Every message is passed through it once, where it is printed (main's catch, note()).
std::string printable(std::string_view text);

// Returns `text` whole when it has at most `max` bytes, else its first `max` bytes (never part of a UTF-8
// character) and "... (N bytes)": a value taken from a file (a header of 20,000 dimensions) keeps a message short.
// Every Error's message is clipped to k_max_message bytes as it is made.
std::string clipped(std::string_view text, std::size_t max);
inline constexpr std::size_t k_max_message = 1000;

[[noreturn]] void assertion_failed(const char* expr, const char* file, int line);

}  // namespace wavg

#define WAVG_ASSERT(expr) ((expr) ? void(0) : ::wavg::assertion_failed(#expr, __FILE__, __LINE__))
