#pragma once
// One table of names per enum. The command line (its choices, --help, error messages and completions) and the
// methods' describe() read the same rows, so a value is spelled one way everywhere and a new value is one row.

#include <string>
#include <string_view>
#include <vector>

namespace wavg {

template <class Enum>
struct Named {
  std::string_view name;
  Enum value;
  bool alias = false;  // accepted on the command line, not listed (--out-dtype f16 for float16)
};

// Returns the first name `table` gives `value`, or "?" for a value it does not list.
template <class Table, class Enum>
constexpr std::string_view name_of(const Table& table, Enum value) {
  for (const auto& row : table)
    if (!row.alias && row.value == value) return row.name;
  return "?";
}

// Returns the candidate closest to `word` when it is close enough to be a typo (at most one edit, or two in a
// word of five or more letters, a swap of neighbours counting one), else "".
std::string closest(const std::string& word, const std::vector<std::string>& candidates);
// Returns "; did you mean 'NAME'?" for the closest candidate (closest()), or "" when none is close: the end of a
// message refusing a mistyped name.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace wavg
