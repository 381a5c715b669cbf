#pragma once
// Reading the small JSON companions of model folders (an HF index, a PEFT adapter_config.json) whole.

#include <cstdint>
#include <string>

namespace wavg {

// Returns the regular file `path` (a symbolic link is refused) whole. Throws Error (exit 1) naming `path` when it
// cannot be read or is larger than `limit` bytes; `what` names it in the message ("index", "config").
std::string read_small_text(const std::string& path, std::uint64_t limit, const std::string& what);

}  // namespace wavg
