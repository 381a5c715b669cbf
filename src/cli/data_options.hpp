#pragma once
// The data options of wavg eval and wavg barrier: the same CSV and held-out split as local-sgd's built-in trainer.

#include <CLI/CLI.hpp>

#include <string>

namespace wavg::cli {

struct DataCli {
  std::string data;
  int label_col = -1;
  double test_fraction = 0.2;
};

inline void add_data_options(CLI::App& app, DataCli& d) {
  app.add_option("--data", d.data, "CSV or CSV.gz the model was trained on (local-sgd's --data)")->required();
  app.add_option("--label-col", d.label_col, "Column of the label, from 0 (default: the last)");
  app.add_option("--test-fraction", d.test_fraction, "Rows held out for the test set, as in local-sgd")
      ->default_str("0.2")
      ->check(CLI::Range(0.0, 0.99).description(""));
}

}  // namespace wavg::cli
