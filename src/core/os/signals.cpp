#include "wavg/signals.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <mutex>

#include "wavg/error.hpp"

namespace wavg::signals {

namespace {

constexpr int k_interrupts[] = {SIGINT, SIGTERM, SIGHUP};
// The faults a FaultScope arms; SIGBUS is armed for good once anyone asks (see fault_handler_installed).
constexpr int k_scoped_faults[] = {SIGSEGV, SIGABRT, SIGFPE};

std::array<std::atomic<Cleanup>, 8> g_cleanups{};
std::array<std::atomic<FaultExplainer>, 2> g_explainers{};
std::mutex g_install_mutex;  // installation and registration only; handlers never take it

struct sigaction g_bus_before {};                                   // SIGBUS's action before wavg's
struct sigaction g_scoped_before[std::size(k_scoped_faults)] = {};  // the others', while a scope is armed
int g_scope_depth = 0;                                              // under g_install_mutex

std::atomic<pid_t> g_owner{0};  // the process whose outputs the cleanups name (not a forked child)
std::terminate_handler g_terminate_before = nullptr;

// exit() from anywhere (a library's fatal error, such as libgomp's when it cannot make its threads) and
// std::terminate (an exception out of a parallel region, bad_alloc included) end the process without unwinding
// the stack to the outputs' destructors: the cleanups run there too.
void cleanup_at_exit() {
  if (::getpid() == g_owner.load()) run_cleanups();
}

[[noreturn]] void cleanup_at_terminate() {
  cleanup_at_exit();
  if (g_terminate_before) g_terminate_before();
  std::abort();
}

// DeferInterrupts, process-wide: a signal sent to the process reaches any thread that does not block it (a hash
// thread, an OpenMP worker), whose cleanups would otherwise run while the deferring thread is halfway through a step
// (a file created in a temporary folder the cleanup is emptying, which then stays). While any thread defers, the
// handler only notes the signal; the last DeferInterrupts to end raises it again. Both sides store, then read the
// other's variable (sequentially consistent), so exactly one of them acts on a noted signal.
std::atomic<int> g_deferring{0};
std::atomic<int> g_noted{0};

extern "C" void on_interrupt(int sig) {
  g_noted.store(sig);
  if (g_deferring.load() > 0) return;
  sig = g_noted.exchange(0);
  if (sig == 0) return;  // the last DeferInterrupts took it and raises it
  run_cleanups();
  ::signal(sig, SIG_DFL);
  ::raise(sig);  // blocked while this handler runs: delivered, under the default action, when it returns
}

// SIGXFSZ, raised by a write past the file-size limit (ulimit -f), ends the process by default: no message, and
// the temporary output stays beside the target. Caught, the write fails with EFBIG instead and the writer reports
// it as any failed write (and the output is removed as on any error). A handler that does nothing rather than
// SIG_IGN: an ignored signal stays ignored in the programs wavg runs (soup's evaluation, a trainer), a caught one
// is back to its default there.
extern "C" void on_file_size_limit(int) {}

// Puts back the action in place before wavg's for `sig` and lets it act: a fault the kernel raised happens again
// when the handler returns; a signal somebody sent is sent again.
void pass_on(int sig, const siginfo_t* info) {
  struct sigaction before {};
  if (sig == SIGBUS) {
    before = g_bus_before;
  } else {
    for (std::size_t i = 0; i < std::size(k_scoped_faults); ++i)
      if (k_scoped_faults[i] == sig) before = g_scoped_before[i];
  }
  if (!(before.sa_flags & SA_SIGINFO) && before.sa_handler == SIG_IGN) before.sa_handler = SIG_DFL;
  ::sigaction(sig, &before, nullptr);
  if (info->si_code <= 0) ::raise(sig);  // SI_USER, SI_TKILL, SI_QUEUE: not a fault that would recur
}

extern "C" void on_fault(int sig, siginfo_t* info, void*) {
  // si_addr means something only for a fault the kernel raised (si_code > 0), not for a signal somebody sent.
  const void* address = (sig == SIGSEGV || sig == SIGBUS) && info->si_code > 0 ? info->si_addr : nullptr;
  for (const auto& slot : g_explainers) {
    const FaultExplainer explain = slot.load(std::memory_order_acquire);
    const char* file = nullptr;
    const char* what = nullptr;
    if (explain && explain(sig, address, file, what)) {
      // Several threads may fault on the same shrunken file at once: one reports, the others wait for its _exit().
      static std::atomic_flag reported = ATOMIC_FLAG_INIT;
      if (reported.test_and_set())
        for (;;) ::pause();
      run_cleanups();
      write_stderr("wavg: error: ");
      write_stderr(file ? file : "?");
      write_stderr(": ");
      write_stderr(what ? what : "fatal signal");
      write_stderr("\n");
      ::_exit(static_cast<int>(ExitCode::runtime));
    }
  }
  pass_on(sig, info);
}

// An alternate stack for this thread (the one that installs: wavg's main thread), so the fault handler also runs
// when the fault came from a stack overflow.
void add_alternate_stack() {
  static char alt_stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  ::sigaltstack(&ss, nullptr);
}

struct sigaction fault_action() {
  struct sigaction sa {};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  return sa;
}

// Installs the SIGBUS handler once; the caller holds g_install_mutex.
void install_fault_handler_locked() {
  static bool installed = false;
  if (installed) return;
  add_alternate_stack();
  const struct sigaction sa = fault_action();
  ::sigaction(SIGBUS, &sa, &g_bus_before);
  installed = true;
}

}  // namespace

void write_stderr(const char* text) noexcept {
  for (std::size_t n = std::strlen(text); n > 0;) {
    const ssize_t w = ::write(STDERR_FILENO, text, n);
    if (w <= 0) return;
    text += w;
    n -= static_cast<std::size_t>(w);
  }
}

DeferInterrupts::DeferInterrupts() {
  sigset_t block;
  sigemptyset(&block);
  for (int sig : k_interrupts) sigaddset(&block, sig);
  ::pthread_sigmask(SIG_BLOCK, &block, &m_old);
  g_deferring.fetch_add(1);
}

DeferInterrupts::~DeferInterrupts() {
  const bool last = g_deferring.fetch_sub(1) == 1;
  ::pthread_sigmask(SIG_SETMASK, &m_old, nullptr);  // a signal sent to this thread meanwhile arrives here
  if (!last) return;
  if (const int sig = g_noted.exchange(0)) ::raise(sig);
}

namespace {

// Calls f(dirfd, name, type) for every entry of the open directory `dir` but "." and "..". getdents64 on a
// descriptor, because opendir() allocates.
template <typename F>
void for_each_entry(int dir, F f) noexcept {
  alignas(dirent64) char buf[2048];
  for (ssize_t n; (n = ::getdents64(dir, buf, sizeof buf)) > 0;)
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const dirent64*>(buf + at);
      at += e->d_reclen;
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) f(e->d_name, e->d_type);
    }
}

void remove_entry_at(int dir, const char* name, unsigned char type, int depth) noexcept {
  if (type != DT_DIR && ::unlinkat(dir, name, 0) == 0) return;
  if (depth == 0) return;
  const int sub = ::openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub < 0) return;
  for_each_entry(
      sub, [&](const char* child, unsigned char child_type) { remove_entry_at(sub, child, child_type, depth - 1); });
  ::close(sub);
  ::unlinkat(dir, name, AT_REMOVEDIR);
}

// Splits `path` into its directory, opened, and its last component; returns -1 when the directory cannot be
// opened.
int open_parent(const char* path, const char*& name) noexcept {
  const char* slash = std::strrchr(path, '/');
  name = slash ? slash + 1 : path;
  char dir[4096] = ".";
  if (slash) {
    const auto len = static_cast<std::size_t>(slash - path);
    if (len >= sizeof dir) return -1;
    std::memcpy(dir, path, len);
    dir[len ? len : 1] = 0;  // "/NAME" lies in "/"
  }
  return ::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

}  // namespace

void remove_derived(const char* path) noexcept {
  const char* base = nullptr;
  const int dir = open_parent(path, base);
  if (dir < 0) return;
  const std::size_t len = std::strlen(base);
  for_each_entry(dir, [&](const char* name, unsigned char) {
    if (std::strncmp(name, base, len) == 0 && name[len] == '.') ::unlinkat(dir, name, 0);
  });
  ::close(dir);
}

void remove_tree(const char* path) noexcept {
  const char* name = nullptr;
  const int dir = open_parent(path, name);
  if (dir < 0) return;
  remove_entry_at(dir, name, DT_UNKNOWN, 8);
  ::close(dir);
}

void add_cleanup(Cleanup cleanup) {
  const std::lock_guard lock(g_install_mutex);
  static const bool installed = [] {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    // Cleanups must not be cut short by a second interrupt: each blocks the others while it runs.
    for (int sig : k_interrupts) sigaddset(&sa.sa_mask, sig);
    for (int sig : k_interrupts) ::sigaction(sig, &sa, nullptr);
    struct sigaction xfsz {};
    xfsz.sa_handler = on_file_size_limit;
    sigemptyset(&xfsz.sa_mask);
    ::sigaction(SIGXFSZ, &xfsz, nullptr);
    std::atexit(cleanup_at_exit);
    g_terminate_before = std::set_terminate(cleanup_at_terminate);
    return true;
  }();
  (void)installed;
  g_owner.store(::getpid());
  for (auto& slot : g_cleanups) {
    Cleanup expected = nullptr;
    if (slot.load() == cleanup || slot.compare_exchange_strong(expected, cleanup)) return;
  }
  WAVG_ASSERT(!"too many signal cleanups");
}

void run_cleanups() noexcept {
  for (const auto& slot : g_cleanups)
    if (const Cleanup cleanup = slot.load(std::memory_order_acquire)) cleanup();
}

void set_fault_explainer(FaultSource source, FaultExplainer explainer) {
  const std::lock_guard lock(g_install_mutex);
  install_fault_handler_locked();
  g_explainers[static_cast<std::size_t>(source)].store(explainer, std::memory_order_release);
}

FaultScope::FaultScope() {
  const std::lock_guard lock(g_install_mutex);
  install_fault_handler_locked();
  if (g_scope_depth++ > 0) return;
  const struct sigaction sa = fault_action();
  for (std::size_t i = 0; i < std::size(k_scoped_faults); ++i)
    ::sigaction(k_scoped_faults[i], &sa, &g_scoped_before[i]);
}

FaultScope::~FaultScope() {
  const std::lock_guard lock(g_install_mutex);
  if (--g_scope_depth > 0) return;
  for (std::size_t i = 0; i < std::size(k_scoped_faults); ++i)
    ::sigaction(k_scoped_faults[i], &g_scoped_before[i], nullptr);
}

}  // namespace wavg::signals
