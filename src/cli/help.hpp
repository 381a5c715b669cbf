#pragma once
// The layout of --help: every line within k_help_width columns (an 80- or 100-column terminal shows it unbroken),
// descriptions wrapped at word boundaries in their column, a long option name with its list of values (--format
// hdf5|safetensors|...) broken after a '|'. CLI11's own formatter writes each description on one line of any length.

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace wavg::cli {

inline constexpr std::size_t k_help_width = 100;

class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter();
  std::string make_group(std::string group, bool is_positional, std::vector<const CLI::Option*> opts) const override;
  std::string make_option(const CLI::Option* opt, bool is_positional) const override;
  std::string make_subcommand(const CLI::App* sub) const override;
};

// Returns `text` wrapped at word boundaries into lines of at most `width` columns, each after the first starting
// with `indent` spaces; a '\n' in `text` starts a new line.
std::string wrap(const std::string& text, std::size_t width, std::size_t indent);

}  // namespace wavg::cli
