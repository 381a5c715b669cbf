// Hostile input for wavg's native walk of HDF5's structure (formats/hdf5/native_index.*): files the native walk
// reads itself, with seeded single-byte and 8-byte overwrites in their first metadata bytes (the superblock, the
// root's object header, B-tree nodes, symbol nodes, local heaps). Opened with Walk::native, each must be read or
// refused with a wavg::Error, never crash or hang; where both walks take a damaged file, they must find the same
// structure. Each damaged file is opened in a child process (support/run.hpp): a crash there is reported with the
// damage that caused it (and, in the sanitizer build, the sanitizer's report) instead of ending the whole run. A
// crash inside the HDF5 library, which the native walk leaves a file it does not know to, is counted apart: it is
// the library's (h5.hpp, CrashGuard), and it happens under Walk::library alike.

#include <doctest/doctest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hdf5/hdf5_reader.hpp"
#include "support/h5corpus.hpp"
#include "support/h5native_diff.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"
#include "wavg/error.hpp"

using namespace wavg;
using namespace wavg::test;

namespace {

class Lcg {
 public:
  explicit Lcg(std::uint64_t seed) : m_state(seed) {}
  std::uint64_t next() {
    m_state = m_state * 6364136223846793005ull + 1442695040888963407ull;
    return m_state >> 17;
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }

 private:
  std::uint64_t m_state;
};

// Opens `path` with `walk` and reads every tensor whole; returns its structure, or "" with `error` set when it was
// refused.
std::string open_and_read(const std::string& path, Hdf5Reader::Walk walk, bool& natively, std::string& error) {
  try {
    Hdf5Reader r(path, Hdf5Reader::Probe::no, walk);
    // The first and last elements of each tensor: damage can declare terabytes in a few bytes.
    for (std::size_t i = 0; i < r.tensors().size(); ++i) {
      const TensorInfo& t = r.tensors()[i];
      const std::uint64_t n = std::min<std::uint64_t>(t.count(), 1024);
      std::vector<unsigned char> buf(n * dtype_size(t.dtype));
      if (n == 0) continue;
      r.read(i, 0, n, buf.data());
      r.read(i, t.count() - n, n, buf.data());
    }
    natively = r.walked_natively();
    return r.structure();
  } catch (const Error& e) {
    error = e.problems().empty() ? "?" : e.problems().front().what;
    return "";
  }
}

// In a child: opens the file natively, then through the library, and says on stderr how each went ("native ...",
// "library ...", and "differs ..." when both took it and found different structures).
void open_both(const std::string& path) {
  ::alarm(20);  // a hang ends the child with SIGALRM
  bool natively = false, unused = false;
  std::string native_error, library_error;
  const std::string native = open_and_read(path, Hdf5Reader::Walk::native, natively, native_error);
  std::fprintf(stderr, "native %s\n",
               native.empty() ? ("refused: " + native_error).c_str()
               : natively     ? "read natively"
                              : "read by the library");
  const std::string library = open_and_read(path, Hdf5Reader::Walk::library, unused, library_error);
  std::fprintf(stderr, "library %s\n", library.empty() ? ("refused: " + library_error).c_str() : "read");
  if (!native.empty() && !library.empty() && native != library)
    std::fprintf(stderr, "differs at %s\n", first_difference(native, library).c_str());
}

// Runs `body` in a forked child (support/run.hpp). Any exception ends the child (exit 3): it must never return into
// the test runner, of which the child is a copy.
RunResult in_child(const std::function<void()>& body) {
  return run_in_child([&] {
    // As the structure probe's child: the memory in use and 2 GiB more, so that a size the damage made huge fails
    // at once (inside the HDF5 library too) rather than after the machine has swapped.
    long pages = 0;
    if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(statm, "%ld", &pages) != 1) pages = 0;
      std::fclose(statm);
    }
    const rlim_t limit = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + (rlim_t{2} << 30);
    const struct rlimit rl { limit, limit };
    if (pages > 0) ::setrlimit(RLIMIT_AS, &rl);
    try {
      body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "threw %s\n", e.what());
      ::_exit(3);
    } catch (...) {
      ::_exit(3);
    }
  });
}

// Whether the HDF5 library alone crashes on (or hangs over) the file: then a crash under Walk::native is its.
bool library_crashes(const std::string& path) {
  return in_child([&] {
           ::alarm(20);
           bool unused = false;
           std::string error;
           open_and_read(path, Hdf5Reader::Walk::library, unused, error);
         }).exit_code != 0;
}

// Where the damage goes: anywhere before the first dataset's data, or near the start of a structure there.
std::vector<std::uint64_t> structure_starts(const std::string& bytes, std::uint64_t end) {
  std::vector<std::uint64_t> starts{0, 96};  // the superblock (v0) and the root's object header after it
  for (const char* sig : {"TREE", "SNOD", "HEAP"})
    for (std::size_t at = bytes.find(sig); at != std::string::npos && at < end; at = bytes.find(sig, at + 1))
      starts.push_back(at);
  return starts;
}

struct Tally {
  int natively = 0, by_library = 0, refused = 0, library_crashes = 0, native_stricter = 0, library_stricter = 0;
  std::string examples;
};

// Damages `original` `count` times (seeded by `seed`) and checks each damaged file; returns what happened.
Tally damage(const std::string& original, const TempDir& dir, int count, std::uint64_t seed) {
  std::uint64_t data_begin = original.size();
  {
    const std::string clean = dir.write("clean.h5", original);
    Hdf5Reader r(clean, Hdf5Reader::Probe::no, Hdf5Reader::Walk::native);
    REQUIRE(r.walked_natively());
    for (std::size_t i = 0; i < r.tensors().size(); ++i)
      if (r.direct_offset(i) >= 0) data_begin = std::min<std::uint64_t>(data_begin, r.direct_offset(i));
  }
  REQUIRE(data_begin > 200);
  const std::vector<std::uint64_t> starts = structure_starts(original, data_begin);
  Lcg rng(seed);
  Tally tally;
  for (int v = 0; v < count; ++v) {
    std::string bytes = original;
    const bool wide = rng.below(5) < 2;
    const std::uint64_t at = rng.below(2) ? rng.below(data_begin - 8)
                                          : std::min(starts[rng.below(starts.size())] + rng.below(48), data_begin - 8);
    std::uint64_t value = rng.next() ^ (rng.next() << 40);
    std::string what;
    if (wide) {
      const std::uint64_t choices[] = {
          value, 0, ~std::uint64_t{0}, original.size(), original.size() - 1, rng.below(64), std::uint64_t{1} << 63, at};
      value = choices[rng.below(std::size(choices))];
      for (int i = 0; i < 8; ++i) bytes[at + static_cast<std::size_t>(i)] = static_cast<char>(value >> (8 * i));
      what = "8 bytes at " + std::to_string(at) + " set to " + std::to_string(value);
    } else {
      bytes[at] = static_cast<char>(value & 0xff);
      what = "byte " + std::to_string(at) + " set to " + std::to_string(value & 0xff);
    }
    const std::string path = dir.write("damaged.h5", bytes);
    const RunResult r = in_child([&] { open_both(path); });
    INFO("damage " << v << ": " << what);
    INFO(r.err);
    const bool native_done = r.err.find("native ") != std::string::npos;
    if (r.exit_code != 0 && (native_done || library_crashes(path))) {
      ++tally.library_crashes;  // the library's own walk crashes on it too
      continue;
    }
    CHECK_MESSAGE(r.exit_code == 0, "the native walk crashed or hung (exit " << r.exit_code << ")");
    CHECK_MESSAGE(r.err.find("differs at") == std::string::npos, "both walks took it, differently");
    const bool native_refused = r.err.find("native refused") != std::string::npos;
    const bool library_refused = r.err.find("library refused") != std::string::npos;
    tally.natively += r.err.find("native read natively") != std::string::npos;
    tally.by_library += r.err.find("native read by the library") != std::string::npos;
    tally.refused += native_refused;
    tally.native_stricter += native_refused && !library_refused;
    tally.library_stricter += library_refused && !native_refused;
    if (library_refused && !native_refused && tally.library_stricter <= 40) {
      std::string said = r.err;
      std::replace(said.begin(), said.end(), '\n', ' ');
      tally.examples += "\n  " + what + ": " + said;
    }
  }
  return tally;
}

void report(const std::string& name, const Tally& t) {
  MESSAGE(name << ": read natively " << t.natively << ", by the library " << t.by_library << ", refused " << t.refused
               << " (native only " << t.native_stricter << ", library only " << t.library_stricter
               << "), the library crashed " << t.library_crashes << t.examples);
}

}  // namespace

TEST_CASE("native walk: damaged metadata is read or refused with an error, never a crash or a hang") {
  TempDir dir;
  {
    H5Writer w(dir / "tree.h5");
    w.numbers<float>("a/x", H5T_IEEE_F32LE, {2, 3}, floats(6, 1));
    w.numbers<std::int32_t>("a/b/y", H5T_STD_I32LE, {3}, {1, -2, 3});
    w.numbers<double>("z", H5T_IEEE_F64LE, {}, {0.25});
    w.raw("h", half_type(false), {2}, {0x00, 0x3c, 0x00, 0xc0});
    h5_ok(H5Lcreate_soft("/a/x", w.file(), "alias", H5P_DEFAULT, H5P_DEFAULT), "soft link");
    w.close();
    report("default K", damage(read_all(w.path()), dir, 130, 26));
  }
  {  // two symbol entries a node and two children a B-tree node: a deep tree inside the first metadata block
    H5Id fcpl = plist(H5P_FILE_CREATE);
    h5_ok(H5Pset_sym_k(fcpl, 1, 1), "sym_k");
    H5Writer w(dir / "deep_btree.h5", fcpl);
    for (int i = 0; i < 9; ++i) w.numbers<float>("g/d" + std::to_string(i), H5T_IEEE_F32LE, {2}, floats(2, i));
    w.close();
    report("K = 1", damage(read_all(w.path()), dir, 110, 6));
  }
}
