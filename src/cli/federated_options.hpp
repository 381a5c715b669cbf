#pragma once
// The federated options of wavg merge (--base, --method, --server-opt, --clip, ...), grouped under headings in
// --help. Kept apart from merge.cpp so that file still reads as the merge's table of contents.

#include <CLI/CLI.hpp>

#include <string>

#include "wavg/federated.hpp"

namespace wavg::cli {

struct FederatedCli {
  std::string base, state, weight_by, staleness, staleness_fn = "polynomial:a=0.5";
  FederatedOptions options;
  // Raw values; whether each was given is read from its CLI::Option when resolving.
  double trim = 0, server_lr = 0, beta1 = 0, beta2 = 0, tau = 0, mix = 0;
  int byzantine = 0, select = 0;
  std::uint64_t seed = 0;
  CLI::Option *trim_opt = nullptr, *byzantine_opt = nullptr, *select_opt = nullptr, *seed_opt = nullptr,
              *lr_opt = nullptr, *beta1_opt = nullptr, *beta2_opt = nullptr, *tau_opt = nullptr,
              *staleness_fn_opt = nullptr, *mix_opt = nullptr;

  // Copies what was given into `options` (has_base, has_state and the optional values).
  void resolve();
};

// Adds the federated options to `app`, and puts merge's own options under the same headings.
void add_federated_options(CLI::App& app, FederatedCli& f);

}  // namespace wavg::cli
