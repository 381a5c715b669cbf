#pragma once
// One table of names per enum. The command line (its choices, --help, error messages and completions) and the
// methods' describe() read the same rows, so a value is spelled one way everywhere and a new value is one row.

#include <string_view>

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

}  // namespace wavg
