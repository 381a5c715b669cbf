#include "cli/help.hpp"

#include <sstream>

namespace wavg::cli {

namespace {

// The column descriptions start in (CLI11's default), and the indent of a broken option name's later lines.
constexpr std::size_t k_column = 30;
constexpr std::size_t k_name_indent = 6;

// Breaks an option's name and values ("  --format hdf5|safetensors|...") into lines of at most k_help_width
// columns, after a '|' or a space.
std::string break_name(const std::string& name) {
  std::string out, rest = name;
  while (rest.size() > k_help_width) {
    std::size_t at = rest.find_last_of("| ", k_help_width - 1);
    if (at == std::string::npos || at <= k_name_indent) at = k_help_width - 1;  // nowhere to break: cut
    out += rest.substr(0, at + 1) + "\n";
    rest = std::string(k_name_indent, ' ') + rest.substr(at + 1);
  }
  return out + rest;
}

// One entry: its name, then its description from column k_column, on the name's last line when that line leaves
// room, else on the next.
std::string entry(const std::string& name, const std::string& description) {
  std::string text = break_name("  " + name);
  const std::size_t last = text.size() - (text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  if (!description.empty()) {
    if (last < k_column)
      text += std::string(k_column - last, ' ');
    else
      text += "\n" + std::string(k_column, ' ');
    text += wrap(description, k_help_width - k_column, k_column);
  }
  return text + "\n";
}

}  // namespace

std::string wrap(const std::string& text, std::size_t width, std::size_t indent) {
  std::string out;
  std::istringstream paragraphs(text);
  bool first_line = true;
  for (std::string paragraph; std::getline(paragraphs, paragraph);) {
    std::istringstream words(paragraph);
    std::string line;
    const auto flush = [&] {
      out += (first_line ? "" : "\n" + std::string(indent, ' ')) + line;
      first_line = false;
      line.clear();
    };
    for (std::string word; words >> word;) {
      if (!line.empty() && line.size() + 1 + word.size() > width) flush();
      line += (line.empty() ? "" : " ") + word;
    }
    flush();
  }
  return out;
}

HelpFormatter::HelpFormatter() { column_width(k_column); }

std::string HelpFormatter::make_group(std::string group, bool is_positional,
                                      std::vector<const CLI::Option*> opts) const {
  std::string out = "\n" + wrap(group + ":", k_help_width, 2) + "\n";
  for (const CLI::Option* opt : opts) out += make_option(opt, is_positional);
  return out;
}

std::string HelpFormatter::make_option(const CLI::Option* opt, bool is_positional) const {
  return entry(make_option_name(opt, is_positional) + make_option_opts(opt), make_option_desc(opt));
}

std::string HelpFormatter::make_subcommand(const CLI::App* sub) const {
  return entry(sub->get_display_name(true), sub->get_description());
}

}  // namespace wavg::cli
