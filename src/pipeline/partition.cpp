// The division of a distributed merge's work (partition.hpp).

#include "pipeline/partition.hpp"

#include <algorithm>

#include "wavg/error.hpp"

namespace wavg::pipeline {

namespace {

// A place in the stream: element `element` of entry `entry` (the entry's count: its end).
struct Place {
  std::size_t entry = 0;
  std::uint64_t element = 0;
  bool operator<(const Place& o) const { return entry != o.entry ? entry < o.entry : element < o.element; }
};

}  // namespace

std::vector<Share> partition(const std::vector<PartItem>& items, int ranks, const CutFn& cut) {
  WAVG_ASSERT(ranks >= 1);
  std::uint64_t total = 0;
  for (const PartItem& i : items) total += i.count * i.bytes_per_element;
  // The K + 1 places that bound the shares: the stream's start, the K - 1 cuts, its end.
  std::vector<Place> bounds{{0, 0}};
  std::size_t at = 0;
  std::uint64_t before = 0;  // the cost of the entries before `at`
  for (int r = 1; r < ranks; ++r) {
    // total * r / K without overflow: (q K + m) r / K = q r + m r / K.
    const auto k = static_cast<std::uint64_t>(ranks), ur = static_cast<std::uint64_t>(r);
    const std::uint64_t goal = total / k * ur + total % k * ur / k;
    while (at < items.size() && before + items[at].count * items[at].bytes_per_element <= goal) {
      before += items[at].count * items[at].bytes_per_element;
      ++at;
    }
    Place p{at, 0};
    if (at < items.size() && items[at].bytes_per_element > 0) {
      const std::uint64_t wanted = (goal - before + items[at].bytes_per_element / 2) / items[at].bytes_per_element;
      p.element = std::min(cut(at, std::min(wanted, items[at].count)), items[at].count);
    }
    bounds.push_back(std::max(p, bounds.back()));
  }
  bounds.push_back({items.size(), 0});

  std::vector<Share> shares(static_cast<std::size_t>(ranks));
  for (std::size_t r = 0; r + 1 < bounds.size(); ++r) {
    const Place from = bounds[r], to = bounds[r + 1];
    for (std::size_t e = from.entry; e < items.size() && e <= to.entry; ++e) {
      const std::uint64_t begin = e == from.entry ? from.element : 0;
      const std::uint64_t end = e == to.entry ? to.element : items[e].count;
      // An empty tensor is in no share: the engine streams no block of it.
      if (begin < end) shares[r].push_back({e, begin, end});
    }
  }
  return shares;
}

std::uint64_t share_bytes(const Share& share, const std::vector<PartItem>& items) {
  std::uint64_t bytes = 0;
  for (const Piece& p : share) bytes += (p.end - p.begin) * items[p.entry].bytes_per_element;
  return bytes;
}

}  // namespace wavg::pipeline
