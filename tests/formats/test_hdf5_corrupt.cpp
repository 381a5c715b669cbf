// Corrupt HDF5 inputs: the samples with bytes overwritten at pseudo-random places (a fixed seed, so the same
// files every run). Whatever the damage, wavg must answer with exit 0 (the damage missed what it reads), 1 (one
// line naming the file) or 3 (a mismatch report), never a crash and never a partial output.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <hdf5.h>

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

namespace {

// Where the HDF5 library (not wavg) says a dataset's data and object header are.
struct Addresses {
  std::uint64_t data = 0, header = 0;
};
Addresses addresses_of(const std::string& file, const std::string& dataset) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  H5O_info_t info{};
  H5Oget_info2(d, &info, H5O_INFO_BASIC);
  const Addresses a{H5Dget_offset(d), info.addr};
  H5Dclose(d);
  H5Fclose(f);
  return a;
}

// Rewrites the 8-byte little-endian address `from` in the dataset's layout message, the first occurrence after
// its object header's start `header`, to `to`.
void patch_address(const std::string& file, std::uint64_t header, std::uint64_t from, std::uint64_t to) {
  std::string bytes = read_all(file);
  std::string f(8, '\0'), t(8, '\0');
  for (int i = 0; i < 8; ++i) {
    f[static_cast<std::size_t>(i)] = static_cast<char>(from >> (8 * i));
    t[static_cast<std::size_t>(i)] = static_cast<char>(to >> (8 * i));
  }
  const std::size_t at = bytes.find(f, header);
  REQUIRE(at != std::string::npos);
  REQUIRE(at < header + 512);
  bytes.replace(at, 8, t);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

// Merges `bad` with a healthy partner and checks the refusal: exit 1, one line naming `bad` and saying `why`.
void check_refused(const TempDir& dir, const std::string& bad, const std::string& why) {
  write_floats(dir / "partner.h5", "a", {4}, {1, 2, 3, 4}, true);
  write_floats(dir / "partner.h5", "b", {4}, {5, 6, 7, 8}, false);
  for (const std::string& order : {bad + " " + (dir / "partner.h5"), (dir / "partner.h5") + " " + bad}) {
    const auto r = run_wavg("merge -q " + order + " -o " + (dir / "out.h5"));
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.rfind("wavg: error: " + bad + ": ", 0) == 0);
    CHECK(r.err.find(why) != std::string::npos);
    CHECK(!std::filesystem::exists(dir / "out.h5"));
  }
}

}  // namespace

TEST_CASE("a dataset whose data address points into its own object header is refused, not written over") {
  TempDir dir;
  const std::string bad = dir / "bad.h5";
  write_floats(bad, "a", {4}, {1, 2, 3, 4}, true);
  write_floats(bad, "b", {4}, {5, 6, 7, 8}, false);
  const Addresses a = addresses_of(bad, "a");
  patch_address(bad, a.header, a.data, a.header);
  REQUIRE(addresses_of(bad, "a").data == a.header);  // HDF5 itself now reads a's values from its header
  check_refused(dir, bad, "a: its data at bytes [" + std::to_string(a.header) + ", ");
  check_refused(dir, bad, "overlaps the object header of a (corrupt HDF5 file)");
}

TEST_CASE("two datasets whose data share bytes are refused (writing one mean would change the other)") {
  TempDir dir;
  const std::string bad = dir / "bad.h5";
  write_floats(bad, "a", {4}, {1, 2, 3, 4}, true);
  write_floats(bad, "b", {4}, {5, 6, 7, 8}, false);
  const Addresses a = addresses_of(bad, "a"), b = addresses_of(bad, "b");
  patch_address(bad, b.header, b.data, a.data);
  REQUIRE(addresses_of(bad, "b").data == a.data);
  check_refused(dir, bad, "overlaps the data of");
}
