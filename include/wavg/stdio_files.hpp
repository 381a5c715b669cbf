#pragma once
// `-` on the command line: standard input as an input checkpoint, standard output as the output. Every reader maps
// its file and every writer may seek, so both go through a private temporary file (TempFile: mode 0600 under
// $TMPDIR, removed at exit and by the signal handlers): standard input is copied into one before it is opened,
// and the output is written to one and copied to standard output after it is complete (nothing reaches the pipe
// from a run that fails). A checkpoint of several files (TF.js model.json and its shards, a TensorFlow .index
// and its data) cannot travel through one pipe and is refused either way.

#include <functional>
#include <string>
#include <vector>

namespace wavg {

// The name that means standard input or output.
inline constexpr const char* k_stdio_name = "-";

// Returns the path of the private copy of standard input, copying it on the first call: its first MiB, then,
// once `check_head` (called with the copy's path) has not thrown, the rest, each chunk checked against the free
// space of $TMPDIR's file system. Throws Error naming "-" when standard input is a terminal, empty, or cannot be
// read or copied.
const std::string& stdin_copy(const std::function<void(const std::string&)>& check_head);
// Returns `text` with the path of the copy of standard input replaced by "-" (messages and the provenance name
// the input as it was given).
std::string as_given(std::string text);
// Refuses (usage error) `-` given more than once among `inputs`: standard input can be read only once.
void check_stdin_once(const std::vector<std::string>& inputs);

// Refuses (usage error) an output to a terminal: a checkpoint is binary. Call before any work starts.
void check_stdout_is_not_terminal();
// Copies the complete file at `path` to standard output. Throws Error (exit 1) naming "-" when writing fails
// (a closed pipe included).
void copy_to_stdout(const std::string& path);

}  // namespace wavg
