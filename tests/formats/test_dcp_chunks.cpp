// DCP chunk layouts (formats/dcp/dcp_chunks.cpp): row-wise, column-wise, a 2 x 2 grid, uneven splits and a
// scalar, each walked element by element against the chunk and position computed here by hand; and the layouts
// check_cover refuses.
#include <doctest/doctest.h>

#include <chrono>

#include "dcp/dcp.hpp"
#include "wavg/error.hpp"

using namespace wavg;
using namespace wavg::dcp;

namespace {

TensorChunks layout(std::initializer_list<std::pair<Shape, Shape>> boxes) {
  TensorChunks c;
  for (const auto& [offsets, sizes] : boxes) {
    Chunk k;
    k.offsets = offsets;
    k.sizes = sizes;
    c.chunks.push_back(k);
  }
  return c;
}

// Element `flat` of a 2-D tensor of `cols` columns: which chunk (by its offsets) and where inside it.
struct Place {
  Shape offsets;
  std::uint64_t at;
};

Place place(const TensorChunks& c, std::uint64_t cols, std::uint64_t flat) {
  const std::uint64_t r = flat / cols, col = flat % cols;
  for (const Chunk& k : c.chunks)
    if (r >= k.offsets[0] && r < k.offsets[0] + k.sizes[0] && col >= k.offsets[1] && col < k.offsets[1] + k.sizes[1])
      return {k.offsets, (r - k.offsets[0]) * k.sizes[1] + (col - k.offsets[1])};
  FAIL("no chunk holds element " << flat);
  return {};
}

// Walks every block [pos, end) of the tensor by runs and checks each element of each run against place().
void check_runs(const TensorInfo& t, const TensorChunks& c, std::uint64_t block) {
  const std::uint64_t cols = t.shape[1];
  for (std::uint64_t begin = 0; begin < t.count(); begin += block) {
    const std::uint64_t end = std::min(begin + block, t.count());
    std::size_t hint = 0;
    for (std::uint64_t pos = begin; pos < end;) {
      const Run r = run_at(t, c, pos, end, hint);
      REQUIRE(r.count > 0);
      REQUIRE(pos + r.count <= end);
      for (std::uint64_t i = 0; i < r.count; ++i) {
        const Place p = place(c, cols, pos + i);
        CHECK(c.chunks[r.chunk].offsets == p.offsets);
        CHECK(r.at + i == p.at);
      }
      pos += r.count;
    }
  }
}

// Returns check_cover's refusal of `c` (its one problem's text), or "" when it accepts it.
std::string refusal(const TensorInfo& t, TensorChunks c) {
  try {
    check_cover("f", t, c);
  } catch (const Error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].file == "f");
    return e.problems()[0].what;
  }
  return {};
}

}  // namespace

TEST_CASE("dcp chunks: row-wise, column-wise, grid and uneven splits walk to the right chunk and place") {
  const TensorInfo t{"w", DType::f32, {5, 7}};
  for (auto c : {layout({{{0, 0}, {3, 7}}, {{3, 0}, {2, 7}}}),  // rows 3 + 2
                 layout({{{0, 4}, {5, 3}}, {{0, 0}, {5, 4}}}),  // columns 4 + 3, listed out of order
                 layout({{{0, 0}, {2, 3}}, {{0, 3}, {2, 4}}, {{2, 0}, {3, 3}}, {{2, 3}, {3, 4}}}),  // 2 x 2 grid
                 layout({{{0, 0}, {5, 7}}})}) {
    check_cover("f", t, c);
    for (const std::uint64_t block : {1u, 3u, 7u, 11u, 35u}) check_runs(t, c, block);
  }
}

TEST_CASE("dcp chunks: a row-wise split is one run per chunk, whole rows inner") {
  const TensorInfo t{"w", DType::f32, {4, 3, 2}};
  auto c = layout({{{0, 0, 0}, {1, 3, 2}}, {{1, 0, 0}, {3, 3, 2}}, {{2, 0, 0}, {0, 3, 2}}});  // an empty third chunk
  check_cover("f", t, c);
  CHECK(c.chunks.size() == 2);
  CHECK(c.inner_dims == 1);
  CHECK(c.inner == 6);
  std::size_t hint = 0;
  const Run r = run_at(t, c, 2, 24, hint);
  CHECK(r.chunk == 0);
  CHECK(r.at == 2);
  CHECK(r.count == 4);
  const Run s = run_at(t, c, 6, 24, hint);
  CHECK(s.chunk == 1);
  CHECK(s.at == 0);
  CHECK(s.count == 18);
}

TEST_CASE("dcp chunks: a scalar is its one chunk") {
  const TensorInfo t{"step", DType::f32, {}};
  auto c = layout({{{}, {}}});
  check_cover("f", t, c);
  std::size_t hint = 0;
  const Run r = run_at(t, c, 0, 1, hint);
  CHECK(r.count == 1);
  CHECK(r.at == 0);
}

TEST_CASE("dcp chunks: overlaps, holes and chunks outside the shape are refused naming the tensor") {
  const TensorInfo t{"w", DType::f32, {4, 4}};
  auto overlap = layout({{{0, 0}, {2, 4}}, {{1, 0}, {3, 4}}});
  CHECK(refusal(t, overlap) == "tensor w: its chunks at offsets (0, 0) and (1, 0) overlap");
  auto hole = layout({{{0, 0}, {2, 4}}, {{3, 0}, {1, 4}}});
  CHECK(refusal(t, hole) == "tensor w: its chunks hold 12 of its 16 elements (a hole: a chunk is missing)");
  // The same volume as the tensor, but two chunks cover one box: overlap, not a silent hole elsewhere.
  auto twice = layout({{{0, 0}, {2, 4}}, {{0, 0}, {2, 4}}});
  CHECK(refusal(t, twice) == "tensor w: its chunks at offsets (0, 0) and (0, 0) overlap");
  auto outside = layout({{{0, 0}, {4, 4}}, {{3, 2}, {2, 2}}});
  CHECK(refusal(t, outside) ==
        "tensor w: the chunk at offsets (3, 2) of sizes (2, 2) reaches outside its shape (4, 4)");
  auto rank = layout({{{0}, {16}}});
  CHECK(refusal(t, rank) == "tensor w: a chunk at offsets (0,) of sizes (16,) does not have the tensor's 2 dimensions");
}

// One tensor in N one-row chunks, read one block per chunk as the engine does (each block's walk starts from hint
// 0, as pieces() does): the chunk of every row was found by scanning the chunks from the hint, O(N) a block and
// O(N^2) in all (38 s at N = 50,000); found by bisection it is O(log N) a block. The bound is far above the
// bisection's time on a loaded machine and far below the scan's.
TEST_CASE("dcp chunks: a tensor in 200,000 one-row chunks is walked in near-linear time") {
  constexpr std::uint64_t n = 200'000, cols = 2;
  TensorInfo t{"w", DType::f32, {n, cols}};
  TensorChunks c;
  for (std::uint64_t r = n; r-- > 0;) {  // listed backwards: check_cover sorts them
    Chunk k;
    k.offsets = {r, 0};
    k.sizes = {1, cols};
    c.chunks.push_back(k);
  }
  const auto start = std::chrono::steady_clock::now();
  check_cover("x/.metadata", t, c);
  for (std::uint64_t row = 0; row < n; ++row) {
    std::size_t hint = 0;
    const Run r = run_at(t, c, row * cols, (row + 1) * cols, hint);
    REQUIRE(r.chunk == row);
    REQUIRE(r.at == 0);
    REQUIRE(r.count == cols);
    if (row % 1000 == 0)
      REQUIRE(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));  // the scan: minutes
  }
}
