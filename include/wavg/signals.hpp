#pragma once
// The one owner of wavg's signal handlers. A run can end early in three ways, and each needs the same steps in the
// same order wherever it happens:
//
//   SIGINT, SIGTERM, SIGHUP   (Ctrl-C, kill, a closed terminal): run the cleanups (the temporary outputs, the
//                             files extracted from inputs), then die of the signal under its default action, so
//                             the shell sees the usual status (130 for Ctrl-C).
//   a fault wavg can explain  SIGBUS on a page of a mapped input that another program truncated, or SIGSEGV,
//                             SIGBUS, SIGABRT, SIGFPE inside a library call that reads a corrupt file (HDF5): the
//                             explainers are asked in FaultSource order (a mapping first: it names the file that
//                             shrank, even inside a library call), then the cleanups run, one line
//                             `wavg: error: FILE: what` is written, and the process exits 1.
//   SIGXFSZ                   (a write past ulimit -f): caught by a handler that does nothing, so the write fails
//                             with EFBIG and the writer reports it as any failed write.
//   any other fault           the action that was in place before wavg's (the default, or a sanitizer's), so a bug
//                             still crashes with its report.
//
// Handlers run on an alternate stack (a fault from a stack overflow still reports). Everything a handler touches
// is async-signal-safe: fixed tables filled before the signal can come, write(2), unlink(2), _exit(2).
// Registration installs what it needs, so nothing depends on the order of static initialisation.

#include <signal.h>

namespace wavg::signals {

// A step the handlers run before the process ends (typically: unlink temporary files). Must be async-signal-safe.
using Cleanup = void (*)() noexcept;
// Registers `cleanup` (once per function; up to 8) and installs the SIGINT/SIGTERM/SIGHUP/SIGXFSZ handlers; the
// cleanups also run at exit() and std::terminate (which skip the destructors that remove an output), in the process
// that registered last, never in a forked child that exits.
void add_cleanup(Cleanup cleanup);
// Runs every registered cleanup. Async-signal-safe.
void run_cleanups() noexcept;

// Who may explain a fault, in the order they are asked.
enum class FaultSource { mapped_file, library };
// Returns true and sets `file` and `what` (static or long-lived text) when it recognises the fault `sig` at
// `address` (the faulting address for SIGSEGV/SIGBUS, else null). Async-signal-safe.
using FaultExplainer = bool (*)(int sig, const void* address, const char*& file, const char*& what) noexcept;
// Sets the explainer for `source` and installs the SIGBUS handler.
void set_fault_explainer(FaultSource source, FaultExplainer explainer);

// While one exists (they nest), SIGSEGV, SIGABRT and SIGFPE go to wavg's handler too (SIGBUS always does), so that a
// library call reading a corrupt file ends in the one-line error; the actions found before are put back after.
class FaultScope {
 public:
  FaultScope();
  ~FaultScope();
  FaultScope(const FaultScope&) = delete;
  FaultScope& operator=(const FaultScope&) = delete;
};

// Holds SIGINT, SIGTERM and SIGHUP back for its lifetime, in every thread (one that arrives is noted, and raised
// when the last DeferInterrupts of the process ends), so that a step that must not be cut in two (create a file and
// record it for the cleanups; put an output's files in place) runs whole.
class DeferInterrupts {
 public:
  DeferInterrupts();
  ~DeferInterrupts();
  DeferInterrupts(const DeferInterrupts&) = delete;
  DeferInterrupts& operator=(const DeferInterrupts&) = delete;

 private:
  sigset_t m_old;
};

// Writes `text` to standard error with write(2) only. Async-signal-safe.
void write_stderr(const char* text) noexcept;

// Removes every entry of the directory that holds `path` whose name is path's own followed by '.' (the files a
// library or wavg derived from a temporary file: libzip writes NAME.XXXXXX beside NAME). Async-signal-safe.
void remove_derived(const char* path) noexcept;
// Removes `path` and, when it is a directory, everything in it (up to 8 levels deep). Async-signal-safe.
void remove_tree(const char* path) noexcept;

}  // namespace wavg::signals
