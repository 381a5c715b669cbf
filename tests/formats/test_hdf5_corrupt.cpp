// Corrupt HDF5 inputs: the samples with bytes overwritten at pseudo-random places (a fixed seed, so the same
// files every run). Whatever the damage, wavg must answer with exit 0 (the damage missed what it reads), 1 (one
// line naming the file) or 3 (a mismatch report), never a crash and never a partial output.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "support/h5raw.hpp"
#include "support/run.hpp"

using namespace wavg::test;

namespace {

std::size_t lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

void fuzz(const std::string& sample, const std::string& partner, int variants, std::uint64_t seed) {
  const std::string original = read_all(sample);
  REQUIRE(!original.empty());
  TempDir dir;
  std::uint64_t state = seed;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  for (int v = 0; v < variants; ++v) {
    std::string bytes = original;
    const int flips = 1 + static_cast<int>(next() % 8);
    for (int f = 0; f < flips; ++f) {
      const auto at = next() % bytes.size();
      bytes[at] = static_cast<char>(next() & 0xff);
    }
    std::ofstream(dir / "bad.h5", std::ios::binary) << bytes;
    const auto r = run_wavg("merge " + (dir / "bad.h5") + " " + partner + " -o " + (dir / "out.h5") + " -q --force");
    INFO("variant " << v << ": " << r.err);
    CHECK((r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 3));
    if (r.exit_code == 1) {
      CHECK(lines(r.err) == 1);
      CHECK(r.err.rfind("wavg: error: " + (dir / "bad.h5") + ": ", 0) == 0);
      CHECK(!std::filesystem::exists(dir / "out.h5"));
    }
    const auto inspect = run_wavg("inspect --json " + (dir / "bad.h5"));
    CHECK((inspect.exit_code == 0 || inspect.exit_code == 1));
    std::filesystem::remove(dir / "out.h5");
  }
}

}  // namespace

TEST_CASE("damaged Keras 2 model files give an error line, never a crash") {
  fuzz(std::string(WAVG_SAMPLES_DIR) + "/mlp/node1.h5", std::string(WAVG_SAMPLES_DIR) + "/mlp/node2.h5", 120, 7);
}

TEST_CASE("damaged plain HDF5 files with chunked, compressed and float16 data give an error line, never a crash") {
  fuzz(std::string(WAVG_SAMPLES_DIR) + "/dtypes/a.h5", std::string(WAVG_SAMPLES_DIR) + "/dtypes/b.h5", 120, 11);
}
