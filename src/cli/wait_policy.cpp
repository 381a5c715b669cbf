// Idle OpenMP threads sleep instead of spinning: OMP_WAIT_POLICY=passive unless the user chose a policy.
//
// Between two parallel loops the engine's main thread reads and writes files alone. GNU OpenMP's default lets the
// other threads spin meanwhile, waiting for the next loop; on a machine whose cores are busy that spinning takes
// turns from the thread doing the I/O, and the default -j (every core) was 1.3-1.4x slower than -j1 on the plain
// mean (issue 30: 61 % of the CPU in the spin on the shared 2-core VM; passive brings -j2 back to -j1's cost). A
// memory-bound merge gains little from a spinning thread's quicker start: passive costs a futex wake per loop.
//
// libgomp reads the variable once, in its constructor, before main() runs, and has no call to change the policy
// afterwards; an executable's .preinit_array runs earlier still, but before libc has its environment (libc's own
// initialisation then replaces what was set). So wavg sets the variable and executes itself again, once, first
// thing in main(); the variable is removed in the new process once libgomp has read it, so that the programs wavg
// runs (soup's evaluation command, an external trainer) get the environment the user gave. The second start costs
// about 15 ms of CPU, so the subcommands that run no parallel loop (and --help, --version) skip it.

#include "cli/common.hpp"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>

namespace wavg::cli {

namespace {

constexpr const char* k_marker = "WAVG_SET_OMP_WAIT_POLICY";

bool runs_parallel_loops(char** argv) {
  if (!argv[0] || !argv[1] || argv[1][0] == '-') return false;
  for (const char* quiet : {"inspect", "check", "completion"})
    if (std::strcmp(argv[1], quiet) == 0) return false;
  return true;
}

}  // namespace

void use_passive_wait_policy(char** argv) {
  if (std::getenv(k_marker)) {
    ::unsetenv(k_marker);
    ::unsetenv("OMP_WAIT_POLICY");
    return;
  }
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT") || !runs_parallel_loops(argv)) return;
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return;
  self[n] = '\0';
  ::setenv("OMP_WAIT_POLICY", "passive", 1);
  ::setenv(k_marker, "1", 1);
  ::execv(self, argv);
  // Not executable again (no /proc): go on with the default policy.
  ::unsetenv(k_marker);
  ::unsetenv("OMP_WAIT_POLICY");
}

}  // namespace wavg::cli
