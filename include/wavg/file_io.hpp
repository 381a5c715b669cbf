#pragma once
// Positional writes for writers that fill a pre-sized output in place.

#include <cstdint>
#include <string>

namespace wavg {

// Writes all `bytes` at file offset `at` of `fd`, retrying short writes and EINTR. Throws Error (exit 1) naming
// `display` when the write fails (a full disk).
void pwrite_all(int fd, const void* data, std::uint64_t bytes, std::uint64_t at, const std::string& display);
// Closes a writer's output `fd` (-1: nothing to do) and sets it to -1 first, so that no destructor closes it again.
// Throws Error (exit 1) naming `display` when close() fails: a network file system reports a failed write there.
void close_output(int& fd, const std::string& display);
// Writes `text` as the new file `name` of the folder `dir` (a folder output's temporary directory: config files,
// indexes). Throws Error (exit 1) naming `display` when the file cannot be made.
void write_new_file(const std::string& dir, const std::string& name, const std::string& text,
                    const std::string& display);

}  // namespace wavg
