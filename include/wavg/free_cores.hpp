#pragma once
// How many of this process's cores no other program is using now, for the default thread count: on a shared machine
// a worker that lands on a busy core waits for it, and a parallel loop waits for its slowest worker, so a merge with
// as many workers as cores can be slower than with one (issue 43).

#include <string_view>

namespace wavg {

// Returns the cores of `cores` (at least 1) that the runnable tasks of /proc/loadavg's fourth field ("running/total",
// the tasks running or waiting for a core at the moment it was read, this process's thread among them) leave free,
// at least 1; `cores` when the text cannot be read.
int free_cores(int cores, std::string_view loadavg);

// Returns free_cores() of the cores this process may run on (sched_getaffinity) and /proc/loadavg read now.
int free_cores_now();

}  // namespace wavg
