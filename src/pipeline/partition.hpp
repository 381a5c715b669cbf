#pragma once
// How a distributed merge divides its work among K ranks. The plan's tensors, in plan order, are one stream of
// bytes to read and write; each tensor costs its elements times the bytes one element moves (read from every input
// it averages, or from the one it copies, and written once). The stream is cut at K - 1 points, K equal costs apart,
// so each rank gets one contiguous run of it: whole tensors, and the ends of the tensors a cut falls in. A cut
// inside a tensor goes to the nearest element where the engine may begin a block without changing any result
// (Engine::share_cut: where a reduction chunk of the single-process layout begins), so a rank's share is off an even
// share by at most one such chunk (16,384 elements, 64 KiB of float32 per input), whatever the sizes of the tensors:
// one huge embedding is split like any other stream of bytes.

#include <cstdint>
#include <functional>
#include <vector>

namespace wavg::pipeline {

// Elements [begin, end) of plan entry `entry`.
struct Piece {
  std::size_t entry = 0;
  std::uint64_t begin = 0, end = 0;
};
// One rank's pieces, in plan order.
using Share = std::vector<Piece>;

// What one plan entry costs: its elements and the bytes each of them moves.
struct PartItem {
  std::uint64_t count = 0;
  std::uint64_t bytes_per_element = 0;
};

// Returns where a share may begin inside entry `entry`: the element nearest `wanted` (at most the entry's count).
using CutFn = std::function<std::uint64_t(std::size_t entry, std::uint64_t wanted)>;

// Divides `items` among `ranks` shares of nearly equal cost (see the top of this file).
std::vector<Share> partition(const std::vector<PartItem>& items, int ranks, const CutFn& cut);
// Returns the bytes `share` moves.
std::uint64_t share_bytes(const Share& share, const std::vector<PartItem>& items);

}  // namespace wavg::pipeline
