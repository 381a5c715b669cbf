#pragma once
// Usage errors in wavg's words: CLI11's own messages ("inputs is required", "The following argument was not
// expected: mereg") rewritten to read like the rest of wavg's, with a suggestion for a mistyped subcommand, option
// or value, and a pointer to the help of the subcommand the error is about.

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace wavg::cli {

// Returns the line main prints for a parse error of `app` (without "wavg: error: "), ending with the help to see.
std::string usage_message(const CLI::ParseError& e, const CLI::App& app);

}  // namespace wavg::cli
