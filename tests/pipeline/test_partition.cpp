// The division of a distributed merge among ranks (src/pipeline/partition.hpp), on hand-made cost lists whose even
// shares are worked out here by hand.

#include <doctest/doctest.h>

#include "pipeline/partition.hpp"

namespace wavg::pipeline {

namespace {

// Cuts anywhere: every element is a chunk start.
std::uint64_t anywhere(std::size_t, std::uint64_t wanted) { return wanted; }

}  // namespace

TEST_CASE("partition: one rank takes every entry whole") {
  const std::vector<PartItem> items{{10, 4}, {0, 4}, {5, 2}};
  const auto shares = partition(items, 1, anywhere);
  REQUIRE(shares.size() == 1);
  REQUIRE(shares[0].size() == 2);  // the empty entry streams nothing
  CHECK(shares[0][0].entry == 0);
  CHECK(shares[0][0].end == 10);
  CHECK(shares[0][1].entry == 2);
  CHECK(share_bytes(shares[0], items) == 50);
}

TEST_CASE("partition: one huge entry is split, so each rank gets an even share") {
  // An embedding of 1000 elements and two small tensors of 10: 1020 elements x 4 bytes, 1360 bytes a rank of 3.
  const std::vector<PartItem> items{{10, 4}, {1000, 4}, {10, 4}};
  const auto shares = partition(items, 3, anywhere);
  REQUIRE(shares.size() == 3);
  for (const Share& s : shares) CHECK(share_bytes(s, items) == 1360);
  // Rank 0: the first tensor and elements [0, 330) of the embedding; rank 1: [330, 670); rank 2: the rest.
  CHECK(shares[0].size() == 2);
  CHECK(shares[0][1].entry == 1);
  CHECK(shares[0][1].end == 330);
  CHECK(shares[1].size() == 1);
  CHECK(shares[1][0].begin == 330);
  CHECK(shares[1][0].end == 670);
  CHECK(shares[2][0].begin == 670);
  CHECK(shares[2][1].entry == 2);
}

TEST_CASE("partition: cuts land where the engine may begin a block, off an even share by less than a chunk") {
  // Chunks of 64 elements: a cut moves to the nearest multiple of 64.
  const auto chunks = [](std::size_t, std::uint64_t wanted) { return (wanted + 32) / 64 * 64; };
  const std::vector<PartItem> items{{100000, 6}};  // one tensor, 2 inputs of 2 bytes read, 2 written
  const auto shares = partition(items, 4, chunks);
  std::uint64_t covered = 0;
  for (const Share& s : shares) {
    REQUIRE(s.size() == 1);
    CHECK(s[0].begin == covered);
    CHECK(s[0].begin % 64 == 0);
    covered = s[0].end;
    const double even = 600000.0 / 4;
    CHECK(static_cast<double>(share_bytes(s, items)) == doctest::Approx(even).epsilon(64.0 * 6 / even));
  }
  CHECK(covered == 100000);
}

TEST_CASE("partition: more ranks than elements leaves some ranks nothing, each element written once") {
  const std::vector<PartItem> items{{2, 4}};
  const auto shares = partition(items, 4, anywhere);
  std::uint64_t total = 0;
  for (const Share& s : shares) total += share_bytes(s, items);
  CHECK(total == 8);
}

}  // namespace wavg::pipeline
