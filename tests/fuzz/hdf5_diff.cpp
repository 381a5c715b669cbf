// Fuzzes wavg's own walk of an HDF5 file's structure against the HDF5 library's walk on the same bytes: the
// comparison of tests/support/h5native_diff.* (what each finds, byte for byte, and every tensor's bytes through
// both readers), which issue 39 asks to hold for any file: where the two could disagree, the native walk must be
// at least as strict.
//
// The library is not ours and faults on some damaged files (structure_probe.hpp says which); wavg opens every file
// in a child process first for that reason. So does this target: the comparison runs in a forked child, as a
// doctest case (the checks of h5native_diff.cpp are doctest's), under a time limit. The child's fate tells:
//   exit 0            the walks agree (or both refuse the file)
//   exit 1            a check failed (doctest printed which), or a sanitizer found an error: a finding
//   SIGSEGV, SIGBUS,  the library faulted or hung on a file the native walk leaves to it, as it may: not a finding
//   SIGALRM           (the count is printed at exit, for the report)
// The parent walks the bytes natively first, in its own process, so that libFuzzer sees that code's coverage.

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "fuzz_input.hpp"
#include "hdf5/hdf5_reader.hpp"
#include "hdf5/native_index.hpp"
#include "support/h5native_diff.hpp"
#include "wavg/error.hpp"

namespace {

constexpr unsigned k_child_seconds = 10;
std::string g_path;  // the file the child's test case compares
unsigned long g_compared = 0, g_library_faults = 0;

// The native walk may refuse a damaged file the library would take (issue 39: it must be at least as strict, e.g.
// data overlapping a group's B-tree): no finding. Every file it takes must read as the library reads it.
TEST_CASE("the native HDF5 walk agrees with the library's") {
  try {
    const wavg::Hdf5Reader native(g_path, wavg::Hdf5Reader::Probe::no, wavg::Hdf5Reader::Walk::native);
  } catch (const wavg::Error&) {
    return;
  }
  wavg::test::check_walks_agree(g_path, std::nullopt);
}

// The child: the comparison as a doctest run; the library's faults end it by a signal the parent recognises.
[[noreturn]] void compare_in_child() {
  struct sigaction plain {};
  plain.sa_handler = SIG_DFL;
  for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGALRM}) ::sigaction(sig, &plain, nullptr);
  ::alarm(k_child_seconds);
  doctest::Context context;
  context.setOption("minimal", true);
  context.setOption("no-breaks", true);
  std::_Exit(context.run() == 0 ? 0 : 1);
}

void report() {
  std::fprintf(stderr, "hdf5_diff: %lu files compared, %lu left because the HDF5 library faulted or hung\n",
               g_compared, g_library_faults);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A file the native walk leaves whole to the library is walked twice by the library: nothing to compare.
  // Damage the walk names refuses the file where the library may not: native stricter is no finding.
  try {
    if (!wavg::h5native::Index::read(data, size)) return 0;
  } catch (const wavg::h5native::Index::Damage&) {
    return 0;
  }
  static const bool reporting = std::atexit(report) == 0;
  (void)reporting;
  g_path = wavg::fuzz::write_files(data, size, "model.h5") + "/model.h5";
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("fork");
    std::abort();
  }
  if (pid == 0) compare_in_child();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  ++g_compared;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  if (WIFSIGNALED(status)) {
    ++g_library_faults;
    return 0;
  }
  std::fprintf(stderr, "finding: the native HDF5 walk and the library's disagree (exit %d, above)\n",
               WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  std::abort();
}
