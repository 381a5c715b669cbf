#pragma once
// --eval 'CMD {model}': the user's evaluation command, run through /bin/sh with {model} replaced by a checkpoint's
// path (shell-quoted); the last non-empty line of its stdout is the score, higher is better. Its stderr passes
// through. Used by wavg soup to pick ingredients and by wavg merge to score the inputs beside the merged model.

#include <string>
#include <vector>

#include "cli/common.hpp"

namespace wavg::cli {

// Returns the score of `model`. Throws Error (exit 1, naming the model) when the command cannot run, exits
// non-zero, or does not end its output with a finite number.
double evaluate(const std::string& command, const std::string& model);

// Adds --eval CMD to `app` with the help text of wavg merge.
void add_eval_option(CLI::App& app, std::string& command);

// Refuses (usage error) a command without {model}.
void check_eval_command(const std::string& command);

// Prints "score S FILE" on stdout for every input and for the output, in that order.
void print_scores(const std::string& command, const std::vector<std::string>& inputs, const std::string& output);

// Formats a score with up to 6 significant digits, as every score line does.
std::string score_text(double score);

}  // namespace wavg::cli
