#pragma once
// local-sgd's --plot and --json: the test loss and accuracy of one or more runs, read back from each run folder's
// log.csv (round,step,train_loss,test_loss,test_accuracy,seconds; an unknown value is an empty field).

#include <string>
#include <vector>

#include "wavg/atomic_file.hpp"

namespace wavg::cli {

struct RunLog {
  std::string dir;
  std::vector<double> round, step, test_loss, test_accuracy;
};

// Reads DIR/log.csv, distrusting it: a missing file, a wrong header or a malformed row is an error naming the file
// and line (exit 1), and so is a run with no test scores at all (an external trainer's run logs none).
RunLog read_run_log(const std::string& dir);

// Prints the runs' rounds as JSON on stdout.
void print_runs_json(const std::vector<RunLog>& runs);

// Draws the runs' test loss and accuracy per step, one line per run, a dot at each average, into `path`.
void plot_runs(const std::vector<RunLog>& runs, const std::string& path, Overwrite overwrite);

}  // namespace wavg::cli
