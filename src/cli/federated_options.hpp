#pragma once
// The federated options of wavg merge (--base, --method, --server-opt, --clip, ...), grouped under headings in
// --help. Kept apart from merge.cpp so that file still reads as the merge's table of contents.

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "wavg/federated.hpp"

namespace wavg::cli {

struct FederatedCli {
  std::string base, state, weight_by, staleness;
  std::optional<std::string> staleness_fn;  // parsed into options.staleness_fn by resolve()
  FederatedOptions options;                 // the optional values (--trim, --server-lr, ...) are bound to it directly

  // Completes `options` from what was given (has_base, has_state, the staleness function).
  void resolve();
};

// Adds the federated options to `app`, and puts merge's own options under the same headings.
void add_federated_options(CLI::App& app, FederatedCli& f);

}  // namespace wavg::cli
