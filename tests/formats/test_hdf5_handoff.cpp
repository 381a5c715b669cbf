// The structure probe's hand-off (formats/hdf5/structure_handoff.cpp): the parent takes the structure the probe's
// child found instead of walking the file again. Values are compared with what the plain HDF5 C API reads
// (support/h5raw), on samples/dtypes/a.h5: contiguous, chunked, compressed, float16 and integer datasets.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "hdf5/hdf5_reader.hpp"
#include "support/h5raw.hpp"
#include "wavg/error.hpp"

using namespace wavg;
using namespace wavg::test;

namespace {

const std::string k_sample = std::string(WAVG_SAMPLES_DIR) + "/dtypes/a.h5";

// Every dataset of the sample with its bytes as the HDF5 library reads them (before wavg opens the file: HDF5
// refuses a second open of a file with other access properties).
std::vector<std::pair<std::string, std::vector<unsigned char>>> sample_datasets() {
  std::vector<std::pair<std::string, std::vector<unsigned char>>> out;
  for (const std::string& name : list_datasets(k_sample)) out.emplace_back(name, read_bytes(k_sample, name));
  std::sort(out.begin(), out.end());
  return out;
}

// Reads every tensor of `r` whole and checks its name and bytes against `expected`.
void check_reads_as_hdf5_does(Hdf5Reader& r,
                              const std::vector<std::pair<std::string, std::vector<unsigned char>>>& expected) {
  std::vector<std::pair<std::string, std::vector<unsigned char>>> got;
  for (std::size_t i = 0; i < r.tensors().size(); ++i) {
    const TensorInfo& t = r.tensors()[i];
    std::vector<unsigned char> bytes(t.bytes());
    r.read(i, 0, t.count(), bytes.data());
    got.emplace_back(t.name, std::move(bytes));
  }
  std::sort(got.begin(), got.end());
  CHECK(got == expected);
}

}  // namespace

TEST_CASE("a reader that takes the probe's answer reads every dataset as the HDF5 library does") {
  const auto expected = sample_datasets();
  REQUIRE(expected.size() > 2);
  Hdf5Reader r(k_sample);  // the probe runs in a child and hands over what it found
  std::size_t direct = 0;
  for (std::size_t i = 0; i < r.tensors().size(); ++i) direct += r.direct_offset(i) >= 0;
  CHECK(direct > 0);                   // read straight from the file at the offset the child found
  CHECK(direct < r.tensors().size());  // opened again by path and read through H5Dread
  check_reads_as_hdf5_does(r, expected);
}

TEST_CASE("a damaged answer from the probe is refused with a clean error, never a crash") {
  const auto expected = sample_datasets();
  const std::string answer = Hdf5Reader(k_sample, Hdf5Reader::Probe::no).structure();
  {
    Hdf5Reader whole(k_sample, answer);
    check_reads_as_hdf5_does(whole, expected);
  }
  for (std::size_t n = 0; n < answer.size(); ++n) {
    INFO("cut at " << n);
    try {
      Hdf5Reader cut(k_sample, std::string_view(answer).substr(0, n));
      FAIL("a cut answer was taken");
    } catch (const Error& e) {
      REQUIRE(e.problems().size() == 1);
      CHECK(e.problems().front().what == "corrupt HDF5 file (the structure probe's answer is unreadable)");
    }
  }
  for (std::size_t at = 0; at < answer.size(); ++at) {
    std::string bad = answer;
    bad[at] = static_cast<char>(bad[at] ^ 0x5a);
    try {
      Hdf5Reader damaged(k_sample, bad);  // a flipped name or value can still make a well-formed answer
    } catch (const Error& e) {
      INFO("flipped at " << at);
      CHECK(e.problems().size() == 1);
    }
  }
}
