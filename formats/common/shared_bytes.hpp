#pragma once
// Finding stored regions that share bytes. A framework's writer gives each tensor (TensorFlow's entries, a DCP
// chunk's torch.save archive, a DeepSpeed rank's flat partition) bytes of its own; regions that overlap would have
// the merge read one region once per claimant, and a small file expand into a large output (a 4 MiB archive
// named by 1,000 chunks is a 4 GB tensor), so a reader refuses them by name.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace wavg {

// One stored region: its file (an index of the reader's), bytes [offset, offset + size), and its owner (an index
// the caller names in its message).
struct StoredRegion {
  std::size_t file = 0;
  std::uint64_t offset = 0, size = 0;
  std::size_t owner = 0;
};

// Returns the owners of two regions that share bytes (the earlier in the file first), or nothing. Empty regions
// share nothing. Sorts: O(n log n).
inline std::optional<std::pair<std::size_t, std::size_t>> shared_bytes(std::vector<StoredRegion> regions) {
  std::erase_if(regions, [](const StoredRegion& r) { return r.size == 0; });
  std::sort(regions.begin(), regions.end(), [](const StoredRegion& a, const StoredRegion& b) {
    return std::tie(a.file, a.offset, a.size, a.owner) < std::tie(b.file, b.offset, b.size, b.owner);
  });
  // Up to the first overlap the regions are disjoint and ascending, so each needs comparing with the one before.
  for (std::size_t i = 1; i < regions.size(); ++i) {
    const StoredRegion& prev = regions[i - 1];
    const StoredRegion& r = regions[i];
    if (r.file == prev.file && r.offset < prev.offset + prev.size) return std::make_pair(prev.owner, r.owner);
  }
  return std::nullopt;
}

}  // namespace wavg
