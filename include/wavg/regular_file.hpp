#pragma once
// Opening input files without trusting what the path names. open() on a FIFO blocks until a writer appears (for
// ever, if none does), and reading a device or socket has no end: an input must be a regular file, and this is
// checked on the opened descriptor (O_NONBLOCK, then fstat), so there is no window between a check and the open.

#include <string>

namespace wavg {

// Whether the last component of a path may be a symbolic link.
enum class Follow { yes, no };

// Opens `path` read-only (close-on-exec, blocking again once open) and returns the descriptor; returns -1 with
// `why` set ("No such file or directory", "is a FIFO, not a regular file", ...) when it cannot be opened or is not
// a regular file. With Follow::no a symbolic link is refused too.
int open_regular(const std::string& path, Follow follow, std::string& why);

// Opens `path` as open_regular does and closes it again; throws Error (exit 1) naming `path` with `why`.
void require_regular(const std::string& path);

// Returns the absolute path, all symbolic links resolved, of the file open as `fd` (from /proc/self/fd), or "".
std::string resolved_path_of(int fd);

}  // namespace wavg
