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

//
// Under an address-space limit (ulimit -v) libgomp may fail to map its threads' stacks (8 MiB each by default, the
// stack limit) at the first parallel loop, and then prints "libgomp: Thread creation failed" and exits: no wavg
// line, no cleanup by wavg. Every loop is parallel over elements, each element summed in the same order, so the
// output is the same bytes for any thread count: fit_threads_to_address_space() runs the loops on one thread when
// the stacks would take more than half of the address space the limit leaves, keeping the other half for the job
// (its input mappings and buffers, which come later). That check alone was not enough: libgomp makes its threads
// at the first parallel loop, after the inputs are mapped, and 8 inputs of 100 MB at ulimit -v 320 MiB with -j 16
// still ended in libgomp's message (issue 39). So under a limit wavg makes the threads itself first, with
// libgomp's stack size, all alive at once (a failure there is an answer, not an exit), and when they all could
// exist it starts OpenMP's team at once, before any input is mapped: libgomp keeps a team's threads for the next
// parallel loops of the same size (every loop uses the one thread count; a loop that runs on one thread makes and
// ends none), so no later loop needs to create one. When they cannot all exist, the loops run on one thread. And
// under a limit the threads share glibc's one malloc arena: each thread's own arena reserves 64 MiB of address
// space at its first malloc, and libgomp's new threads took the room of the threads still to be made (strace:
// their 64 MiB reservations between the clones, then "Thread creation failed").

#include <malloc.h>
#include <omp.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "cli/common.hpp"

namespace wavg::cli {

namespace {

constexpr const char* k_marker = "WAVG_SET_OMP_WAIT_POLICY";

bool runs_parallel_loops(char** argv) {
  if (!argv[0] || !argv[1] || argv[1][0] == '-') return false;
  for (const char* quiet : {"inspect", "check", "completion"})
    if (std::strcmp(argv[1], quiet) == 0) return false;
  return true;
}

// The stack size libgomp gives each thread: OMP_STACKSIZE or GOMP_STACKSIZE (a number, KiB unless followed by B, K, M
// or G), else the threads' default (glibc: the stack limit).
std::uint64_t omp_stack_size() {
  for (const char* name : {"OMP_STACKSIZE", "GOMP_STACKSIZE"})
    if (const char* text = std::getenv(name)) {
      char* end = nullptr;
      const std::uint64_t n = std::strtoull(text, &end, 10);
      while (*end == ' ') ++end;
      switch (*end) {
        case 'b':
        case 'B': return n;
        case 'm':
        case 'M': return n << 20;
        case 'g':
        case 'G': return n << 30;
        default: return n << 10;
      }
    }
  pthread_attr_t attr;
  std::size_t size = 8u << 20;
  if (::pthread_getattr_default_np(&attr) == 0) {
    ::pthread_attr_getstacksize(&attr, &size);
    ::pthread_attr_destroy(&attr);
  }
  return size;
}

// Tells whether `n` threads with stacks of `stack` bytes can exist at once now: makes them, each waiting until
// every one is made, then ends them.
bool threads_can_exist(std::uint64_t n, std::uint64_t stack) {
  pthread_attr_t attr;
  if (::pthread_attr_init(&attr) != 0) return false;
  ::pthread_attr_setstacksize(&attr, static_cast<std::size_t>(stack));
  static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
  ::pthread_mutex_lock(&gate);
  std::vector<pthread_t> made;
  for (std::uint64_t i = 0; i < n; ++i) {
    pthread_t t;
    const auto wait_for_gate = [](void*) -> void* {
      ::pthread_mutex_lock(&gate);
      ::pthread_mutex_unlock(&gate);
      return nullptr;
    };
    if (::pthread_create(&t, &attr, wait_for_gate, nullptr) != 0) break;
    made.push_back(t);
  }
  ::pthread_mutex_unlock(&gate);
  for (const pthread_t t : made) ::pthread_join(t, nullptr);
  ::pthread_attr_destroy(&attr);
  return made.size() == n;
}

// The address space the process maps now, in bytes (/proc/self/statm's first field, in pages).
std::uint64_t mapped_now() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

void fit_threads_to_address_space(int threads, bool verbose) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  ::mallopt(M_ARENA_MAX, 1);
  const std::uint64_t n = threads > 0 ? static_cast<std::uint64_t>(threads) : omp_get_max_threads();
  if (n <= 1) return;
  const std::uint64_t stack = omp_stack_size(), used = mapped_now();
  const std::uint64_t left = limit.rlim_cur > used ? limit.rlim_cur - used : 0;
  if (stack * (n - 1) <= left / 2 && threads_can_exist(n - 1, stack)) {
    // The team, made now while the room is there; its threads wait in libgomp for the next loop. (The region does
    // something: GCC drops an empty one.)
    std::atomic<std::uint64_t> started{0};
#pragma omp parallel num_threads(static_cast <int>(n))
    started.fetch_add(1, std::memory_order_relaxed);
    if (started.load() == n) return;
  }
  ::omp_set_max_active_levels(0);  // every parallel region runs on one thread, whatever -j says later
  if (verbose)
    std::fprintf(stderr,
                 "wavg: one thread: the address-space limit leaves %llu MiB, too little for %llu more threads' "
                 "stacks of %llu MiB each (the output is the same)\n",
                 static_cast<unsigned long long>(left >> 20), static_cast<unsigned long long>(n - 1),
                 static_cast<unsigned long long>(stack >> 20));
}

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
