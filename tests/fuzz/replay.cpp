// The fuzz targets' main where no libFuzzer is linked (the release and sanitize trees, built by g++): replays the
// inputs named on the command line through the target's LLVMFuzzerTestOneInput, and then -runs mutants of them (or
// as many as -seconds allows; the first limit reached ends the run). The suite runs every target this way over its
// seeds and regression inputs (the test fuzz.NAME), a fixed number of mutants each, so that a run is the same on a
// fast machine and a loaded one; a reader that crashes on one of them fails the suite in every build, clang or not.
// Coverage-guided fuzzing is libFuzzer's (the fuzz preset, run.sh).
//
//   fuzz_NAME [-runs=N] [-seconds=S] [-seed=N] [-artifact_prefix=P] FILE_OR_FOLDER...
//
// A mutant is one of its input's bytes changed, a run of bytes overwritten with a boundary value (0, 0xff, 0x7f,
// 0x80: where a length, count or offset lies, the large and the negative), a range cut out or repeated, or the tail
// cut off: libFuzzer's cheapest mutations, enough for the formats' lengths and offsets. The generator is seeded by
// -seed (default 1), so a run is repeatable. Before each input the driver notes what it is; a crash, an abort (a
// finding of fuzz_input.cpp, a sanitizer's report) or a failed assertion writes that input to P + "crash-N" and
// ends the run with the signal's status, as libFuzzer does.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

namespace fs = std::filesystem;

// The input in flight, for the signal handler (set before each call).
const std::uint8_t* g_data = nullptr;
std::size_t g_size = 0;
char g_artifact[4096] = "crash-input";

// Writes the input in flight to the artifact path and dies of the same signal: only async-signal-safe calls.
extern "C" void on_fatal_signal(int sig) {
  const int fd = ::open(g_artifact, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    for (std::size_t at = 0; at < g_size;) {
      const ssize_t n = ::write(fd, g_data + at, g_size - at);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    ::close(fd);
  }
  static const char said[] = "fuzz replay: the input in flight is saved as ";
  (void)!::write(2, said, sizeof said - 1);
  (void)!::write(2, g_artifact, std::strlen(g_artifact));
  (void)!::write(2, "\n", 1);
  std::signal(sig, SIG_DFL);
  ::raise(sig);
}

void run_one(const std::vector<std::uint8_t>& bytes) {
  g_data = bytes.data();
  g_size = bytes.size();
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
}

std::vector<std::uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Changes `bytes` by one of the mutations the header lists.
void mutate(std::vector<std::uint8_t>& bytes, std::mt19937_64& rng) {
  const auto below = [&](std::size_t n) { return n == 0 ? std::size_t{0} : static_cast<std::size_t>(rng() % n); };
  if (bytes.empty()) {
    bytes.push_back(static_cast<std::uint8_t>(rng()));
    return;
  }
  static constexpr std::uint8_t k_boundaries[] = {0x00, 0xff, 0x7f, 0x80};
  const std::size_t at = below(bytes.size());
  switch (rng() % 5) {
    case 0:
      bytes[at] = static_cast<std::uint8_t>(bytes[at] ^ (1u << below(8)));
      break;
    case 1: {
      const std::size_t n = std::min<std::size_t>(1 + below(8), bytes.size() - at);
      std::fill_n(bytes.begin() + static_cast<std::ptrdiff_t>(at), n, k_boundaries[below(4)]);
      break;
    }
    case 2: {
      const std::size_t n = std::min<std::size_t>(1 + below(64), bytes.size() - at);
      bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(at), bytes.begin() + static_cast<std::ptrdiff_t>(at + n));
      break;
    }
    case 3: {
      const std::size_t n = std::min<std::size_t>(1 + below(64), bytes.size() - at);
      const std::vector<std::uint8_t> run(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                                          bytes.begin() + static_cast<std::ptrdiff_t>(at + n));
      bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(below(bytes.size() + 1)), run.begin(), run.end());
      break;
    }
    default:
      bytes.resize(at);
      break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  double seconds = -1;  // no limit unless given
  std::uint64_t seed = 1, runs = UINT64_MAX;
  std::string prefix;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("-seconds=", 0) == 0) {
      seconds = std::atof(arg.c_str() + 9);
    } else if (arg.rfind("-runs=", 0) == 0) {
      runs = std::strtoull(arg.c_str() + 6, nullptr, 10);
    } else if (arg.rfind("-seed=", 0) == 0) {
      seed = std::strtoull(arg.c_str() + 6, nullptr, 10);
    } else if (arg.rfind("-artifact_prefix=", 0) == 0) {
      prefix = arg.substr(17);
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "fuzz replay: unknown option %s\n", arg.c_str());
      return 2;
    } else if (fs::is_directory(arg)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::directory_iterator(arg))
        if (entry.is_regular_file()) files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      inputs.insert(inputs.end(), files.begin(), files.end());
    } else {
      inputs.emplace_back(arg);
    }
  }
  for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, on_fatal_signal);

  std::vector<std::vector<std::uint8_t>> corpus;
  for (const fs::path& path : inputs) {
    std::snprintf(g_artifact, sizeof g_artifact, "%s%s", prefix.c_str(), ("crash-" + path.filename().string()).c_str());
    corpus.push_back(read_file(path));
    run_one(corpus.back());
  }
  std::size_t mutants = 0;
  std::mt19937_64 rng(seed);
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  if (seconds < 0 && runs == UINT64_MAX) runs = 0;  // neither limit: the inputs alone
  while (!corpus.empty() && mutants < runs && (seconds < 0 || elapsed() < seconds)) {
    std::vector<std::uint8_t> bytes = corpus[rng() % corpus.size()];
    for (std::uint64_t n = 1 + rng() % 4; n-- > 0;) mutate(bytes, rng);
    std::snprintf(g_artifact, sizeof g_artifact, "%scrash-seed%llu-mutant%zu", prefix.c_str(),
                  static_cast<unsigned long long>(seed), mutants);
    run_one(bytes);
    ++mutants;
  }
  std::fprintf(stderr, "fuzz replay: %zu inputs, %zu mutants (seed %llu, %.1f s) without a finding\n", corpus.size(),
               mutants, static_cast<unsigned long long>(seed), elapsed());
  return 0;
}
