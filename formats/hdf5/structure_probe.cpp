// The HDF5 structure probe (structure_probe.hpp): the reader run once in a process of its own (this executable,
// spawned with a hidden first argument) under a time and memory limit, its fate passed back through a pipe and the
// exit status, and on success the structure it found.

#include "hdf5/structure_probe.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string_view>

#include "hdf5/hdf5_reader.hpp"
#include "wavg/error.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg {

namespace {

// The probe's budget is CPU time (RLIMIT_CPU in the child), so a valid file's structure is never refused because
// a loaded machine gave the child little of it; the wall-clock limit is only a backstop for a child that sleeps.
// The budget grows with the file: the HDF5 library spends about 40 us of CPU per dataset it opens (its metadata
// cache), so a valid file of 100k small datasets (142 MB) needs about 4 s of its 27; a small hostile file gets 10 s.
constexpr int k_probe_seconds = 10;
constexpr std::uint64_t k_probe_bytes_per_second = 8ull << 20;
constexpr int k_probe_wall_seconds = 300;
constexpr int k_probe_fd = 3;  // where the child writes its error message or its structure
constexpr const char* k_probe_flag = "--hdf5-structure-probe";
constexpr std::uint64_t k_probe_memory = 1ull << 30;

// The CPU seconds the probe of `path` may take: k_probe_seconds, and one more per k_probe_bytes_per_second.
int probe_seconds(const char* path) {
  struct stat st {};
  const std::uint64_t size = ::stat(path, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  return k_probe_seconds + static_cast<int>(std::min<std::uint64_t>(size / k_probe_bytes_per_second, 3600));
}

enum ProbeExit : int { probe_ok = 0, probe_error = 2, probe_out_of_memory = 3 };

// Reads the current virtual size, so the probe's memory limit is "what it has now plus k_probe_memory".
std::uint64_t virtual_size() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  if (f) {
    if (std::fscanf(f, "%llu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  return pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// Writes all of `bytes` to `fd`; false when the pipe broke (the parent is gone).
bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// The probe's child: opens `path`'s structure and writes it to `fd`, or a clean error's message; exits with its
// fate.
int run_structure_probe(const char* path, int fd) {
  // The native parser (native_index.hpp) reads the file through a mapping of all of it: made before the limit, its
  // address space is not taken from the memory the HDF5 library may use (a 4 GiB model would leave it none).
  std::optional<MappedFile> mapping;
  try {
    mapping.emplace(path);
  } catch (const Error&) {
  }
  const std::uint64_t limit = virtual_size() + k_probe_memory;
  const struct rlimit rl { limit, limit };
  ::setrlimit(RLIMIT_AS, &rl);
  const auto seconds = static_cast<rlim_t>(probe_seconds(path));
  const struct rlimit cpu { seconds, seconds + 1 };  // SIGXCPU at the soft limit, SIGKILL after
  ::setrlimit(RLIMIT_CPU, &cpu);
  try {
    // The reader is never closed: HDF5 tearing down its cache of every header it read costs a sixth of the walk,
    // and this process ends as soon as the parent has the answer (the pipe's end-of-file is the exit).
    auto* reader = mapping ? new Hdf5Reader(path, std::move(*mapping)) : new Hdf5Reader(path, Hdf5Reader::Probe::no);
    if (!write_all(fd, reader->structure())) ::_exit(probe_error);
    ::_exit(probe_ok);
  } catch (const Error& e) {
    const std::string what = e.problems().empty() ? "unreadable" : e.problems().front().what;
    (void)!::write(fd, what.data(), what.size());  // a lost message still leaves probe_error
    return probe_error;
  } catch (const std::bad_alloc&) {
    return probe_out_of_memory;
  } catch (...) {
    return probe_error;
  }
}

}  // namespace

int run_codec_helper(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) != k_probe_flag) return -1;
  return run_structure_probe(argv[2], k_probe_fd);
}

std::optional<std::string> probe_structure(const std::string& path) {
  int fds[2];
  // Close-on-exec: a program another thread starts must not hold the write end open, or no end-of-file comes. The
  // child gets its own copy as descriptor 3 (dup2 clears the flag there).
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return std::nullopt;  // no probe possible: proceed unguarded rather than refuse the file
  std::fflush(nullptr);
  // posix_spawn, not fork: this process may run other threads (the provenance's hashing, OpenMP's pool), and a
  // forked child of a threaded process may only call async-signal-safe functions before exec (a lock another
  // thread held at the fork stays held for ever in the child); the probe runs HDF5 and allocates. A spawned
  // process of the same executable starts clean.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], k_probe_fd);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::string exe = "/proc/self/exe";
  std::string flag = k_probe_flag;
  std::string file = path;
  char* argv[] = {exe.data(), flag.data(), file.data(), nullptr};
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return std::nullopt;
  }
  ::close(fds[1]);
  // The pipe reaches end-of-file when the child exits: waiting on it returns as soon as the probe is done (under a
  // millisecond for a small file) rather than at the next tick of a polling loop, which cost 2.5 ms an input.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(k_probe_wall_seconds);
  const auto timed_out = [&] { return std::chrono::steady_clock::now() >= deadline; };
  std::string message;  // the child's error, or its structure
  char buf[1 << 16];
  for (bool eof = false; !eof;) {
    if (timed_out()) {
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, 100);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0 && message.size() > k_probe_memory) {
      ::kill(pid, SIGKILL);  // more than the child can have found within its memory limit
      ::close(fds[0]);
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      fail(path, "corrupt HDF5 file (reading its structure needs more than 1 GiB)");
    }
    if (n > 0)
      message.append(buf, static_cast<std::size_t>(n));
    else
      eof = n == 0 || errno != EINTR;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return std::nullopt;
  if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || (WTERMSIG(status) == SIGKILL && !timed_out())))
    fail(path, "corrupt HDF5 file (the HDF5 library did not finish reading its structure in " +
                   std::to_string(probe_seconds(path.c_str())) + " s of CPU time)");
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
    fail(path, "corrupt HDF5 file (the HDF5 library did not finish reading its structure in " +
                   std::to_string(k_probe_wall_seconds) + " s)");
  if (WIFEXITED(status) && WEXITSTATUS(status) == probe_ok) return message;
  if (WIFEXITED(status) && WEXITSTATUS(status) == probe_error && !message.empty()) fail(path, message);
  if (WIFEXITED(status) && WEXITSTATUS(status) == probe_out_of_memory)
    fail(path, "corrupt HDF5 file (reading its structure needs more than 1 GiB)");
  fail(path, "corrupt HDF5 file (the HDF5 library failed reading its structure)");
}

}  // namespace wavg
