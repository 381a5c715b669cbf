// flat_range_boxes must cover exactly the flat range, in row-major order, for any shape, offset and count.

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "hdf5/h5.hpp"

using wavg::Shape;

namespace {

// Expands boxes to the flat indices they select, row-major within each box (the order HDF5 reads them in, since
// the boxes are disjoint and ascending).
std::vector<std::uint64_t> expand(const Shape& shape, const std::vector<wavg::h5::Box>& boxes) {
  std::vector<std::uint64_t> out;
  const std::size_t rank = shape.size();
  for (const auto& b : boxes) {
    std::vector<std::uint64_t> idx(rank, 0);
    std::uint64_t total = 1;
    for (auto c : b.count) total *= c;
    for (std::uint64_t n = 0; n < total; ++n) {
      std::uint64_t flat = 0;
      for (std::size_t d = 0; d < rank; ++d) flat = flat * shape[d] + b.start[d] + idx[d];
      out.push_back(flat);
      for (std::size_t d = rank; d-- > 0;) {
        if (++idx[d] < b.count[d]) break;
        idx[d] = 0;
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("flat ranges become at most 2*rank boxes covering exactly the range") {
  const std::vector<Shape> shapes{{7}, {3, 5}, {4, 3, 5}, {2, 3, 2, 3}, {1, 1, 9}};
  for (const Shape& shape : shapes) {
    std::uint64_t n = 1;
    for (auto d : shape) n *= d;
    for (std::uint64_t off = 0; off < n; ++off) {
      for (std::uint64_t count = 1; off + count <= n; ++count) {
        const auto boxes = wavg::h5::flat_range_boxes(shape, off, count);
        CHECK(boxes.size() <= 2 * shape.size());
        const auto got = expand(shape, boxes);
        REQUIRE(got.size() == count);
        for (std::uint64_t i = 0; i < count; ++i) REQUIRE(got[i] == off + i);
      }
    }
  }
}
