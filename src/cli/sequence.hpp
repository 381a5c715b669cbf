#pragma once
// Checkpoint sequences for wavg merge: --last N DIR takes the N highest-numbered checkpoints of a directory
// (round-0010.h5, checkpoint_epoch_12.pt, model.ckpt-2000), as fairseq's average_checkpoints.py and
// tensor2tensor's avg_checkpoints.py do; --schedule turns a sequence (oldest first) into explicit weights. The
// newest checkpoint becomes input 1, so what is not averaged comes from it.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "cli/common.hpp"

namespace wavg::cli {

struct SequenceCli {
  std::size_t last = 0;
  std::uint64_t upper_bound = 0;
  std::string pattern, schedule;
  CLI::Option* upper_opt = nullptr;
};

// Adds --last, --upper-bound, --pattern and --schedule under their own heading.
void add_sequence_options(CLI::App& app, SequenceCli& s);

// With --last, replaces the one directory in `inputs` by its checkpoints; with --schedule, sets `weights` (the
// --weights text) to the schedule's weights, printed with -v. With either, the inputs (and weights) are then put
// newest first. Throws a usage error (exit 2) for a directory with fewer than N checkpoints, two files with the
// same number or two numbering schemes without --pattern, --schedule beside --weights, or a bad option value.
void apply_sequence(const SequenceCli& s, std::vector<std::string>& inputs, std::string& weights, const Verbosity& v);

// Returns which of the `n` inputs apply_sequence left is the sequence's newest (whose hyper-parameters and counters
// a merge keeps: PlanOptions::newest_input): input 1, which apply_sequence made the newest, or k_no_input without
// --last or --schedule.
std::size_t newest_input(const SequenceCli& s, std::size_t n);

// Returns what the provenance records of the sequence options ("" when none was given).
std::string sequence_note(const SequenceCli& s);

// Returns the weights of a schedule (uniform, ema:D or linear) for n checkpoints, oldest first.
std::vector<double> schedule_weights(const std::string& schedule, std::size_t n);

}  // namespace wavg::cli
