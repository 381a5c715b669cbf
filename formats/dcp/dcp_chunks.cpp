// A tensor's chunks: checking that they tile it, and finding the chunk run that holds a flat element.
//
// Chunks are boxes (offsets and sizes per dimension). Merging requires a flat row-major view of every tensor, so a
// block [pos, end) is cut into runs, each consecutive both in the tensor and in one chunk. The trailing dimensions
// that every chunk holds whole (from inner_dims on) always stay together: `inner` elements, one "row". Along
// dimension inner_dims - 1 a chunk holds consecutive rows, so a run goes from pos to the end of that chunk's extent
// in that dimension (a row-wise shard is one run; a column-wise shard of a matrix, one run per row). Finding the
// chunk of a row tries the last one used and the one after it (the next run's chunk in row-wise and column-wise
// layouts), then binary-searches the chunks sorted by offsets: the chunk holding a row is the last one starting
// at or before it lexicographically in any grid of chunks (a row-wise, column-wise or block split), and lies a
// short scan back from it otherwise. So a tensor in N chunks costs O(N log N) to read, where scanning all the chunks
// for every block of one-row chunks cost O(N^2) (38 s at N = 50,000).

#include <algorithm>

#include "dcp/dcp.hpp"
#include "wavg/error.hpp"

namespace wavg::dcp {

namespace {

bool overlap(const Chunk& a, const Chunk& b) {
  for (std::size_t d = 0; d < a.offsets.size(); ++d)
    if (a.offsets[d] >= b.offsets[d] + b.sizes[d] || b.offsets[d] >= a.offsets[d] + a.sizes[d]) return false;
  return true;
}

}  // namespace

void check_cover(const std::string& file, const TensorInfo& t, TensorChunks& c) {
  const std::size_t n = t.shape.size();
  std::uint64_t covered = 0;
  for (const Chunk& k : c.chunks) {
    if (k.offsets.size() != n || k.sizes.size() != n)
      fail(file, "tensor " + t.name + ": a chunk at offsets " + shape_string(k.offsets) + " of sizes " +
                     shape_string(k.sizes) + " does not have the tensor's " + std::to_string(n) + " dimensions");
    for (std::size_t d = 0; d < n; ++d)
      if (k.offsets[d] > t.shape[d] || k.sizes[d] > t.shape[d] - k.offsets[d])
        fail(file, "tensor " + t.name + ": the chunk at offsets " + shape_string(k.offsets) + " of sizes " +
                       shape_string(k.sizes) + " reaches outside its shape " + shape_string(t.shape));
    std::uint64_t volume = 1;
    for (const auto s : k.sizes) volume *= s;  // no overflow: each size is within the shape, whose count fits
    covered += volume;
  }
  // Empty chunks (a rank holding no rows) take no part.
  std::erase_if(c.chunks,
                [](const Chunk& k) { return std::find(k.sizes.begin(), k.sizes.end(), 0u) != k.sizes.end(); });
  std::sort(c.chunks.begin(), c.chunks.end(), [](const Chunk& a, const Chunk& b) { return a.offsets < b.offsets; });
  // A sweep along the dimension with the most distinct offsets (the one the tensor is split along): each chunk is
  // compared only with those starting before it ends there, so a row-wise or column-wise split costs one
  // comparison per chunk, not one per pair.
  std::size_t sweep = 0, most = 0;
  for (std::size_t d = 0; d < n; ++d) {
    std::vector<std::uint64_t> starts;
    for (const Chunk& k : c.chunks) starts.push_back(k.offsets[d]);
    std::sort(starts.begin(), starts.end());
    const auto distinct = static_cast<std::size_t>(std::unique(starts.begin(), starts.end()) - starts.begin());
    if (distinct > most) most = distinct, sweep = d;
  }
  std::vector<const Chunk*> order;
  for (const Chunk& k : c.chunks) order.push_back(&k);
  if (n > 0)
    std::stable_sort(order.begin(), order.end(),
                     [&](const Chunk* a, const Chunk* b) { return a->offsets[sweep] < b->offsets[sweep]; });
  for (std::size_t i = 0; i < order.size(); ++i)
    for (std::size_t j = i + 1; j < order.size(); ++j) {
      if (n > 0 && order[j]->offsets[sweep] >= order[i]->offsets[sweep] + order[i]->sizes[sweep]) break;
      if (overlap(*order[i], *order[j]))
        fail(file, "tensor " + t.name + ": its chunks at offsets " + shape_string(order[i]->offsets) + " and " +
                       shape_string(order[j]->offsets) + " overlap");
    }
  // Disjoint boxes inside the shape whose volumes add up to it tile it.
  if (covered != t.count())
    fail(file, "tensor " + t.name + ": its chunks hold " + std::to_string(covered) + " of its " +
                   std::to_string(t.count()) + " elements (a hole: a chunk is missing)");
  c.inner_dims = n;
  while (c.inner_dims > 0 && std::all_of(c.chunks.begin(), c.chunks.end(), [&](const Chunk& k) {
           return k.offsets[c.inner_dims - 1] == 0 && k.sizes[c.inner_dims - 1] == t.shape[c.inner_dims - 1];
         }))
    --c.inner_dims;
  c.inner = 1;
  for (std::size_t d = c.inner_dims; d < n; ++d) c.inner *= t.shape[d];
}

Run run_at(const TensorInfo& t, const TensorChunks& c, std::uint64_t pos, std::uint64_t end, std::size_t& hint) {
  WAVG_ASSERT(pos < end && !c.chunks.empty());
  if (c.inner_dims == 0) return {0, pos, end - pos};  // one chunk holds the whole tensor
  const std::size_t k = c.inner_dims;
  // The row's index in each outer dimension.
  Shape index(k);
  std::uint64_t row = pos / c.inner;
  for (std::size_t d = k; d-- > 0;) index[d] = row % t.shape[d], row /= t.shape[d];
  const auto holds = [&](const Chunk& ch) {
    for (std::size_t d = 0; d < k; ++d)
      if (index[d] < ch.offsets[d] || index[d] >= ch.offsets[d] + ch.sizes[d]) return false;
    return true;
  };
  std::size_t found = c.chunks.size();
  for (std::size_t i = 0; i < 2 && found == c.chunks.size(); ++i)
    if (hint + i < c.chunks.size() && holds(c.chunks[hint + i])) found = hint + i;
  if (found == c.chunks.size()) {
    // The chunk holding the row starts at or before it in every dimension, so lexicographically: the last chunk
    // starting at or before the row (check_cover sorted them by offsets) or one before it.
    const auto before = [&](const Shape& point, const Chunk& ch) {
      return std::lexicographical_compare(point.begin(), point.end(), ch.offsets.begin(), ch.offsets.begin() + k);
    };
    const auto after = std::upper_bound(c.chunks.begin(), c.chunks.end(), index, before);
    for (auto it = after; it != c.chunks.begin() && found == c.chunks.size();)
      if (holds(*--it)) found = static_cast<std::size_t>(it - c.chunks.begin());
  }
  WAVG_ASSERT(found < c.chunks.size());  // check_cover proved the chunks tile the tensor
  hint = found;
  const Chunk& ch = c.chunks[found];
  std::uint64_t local = 0;
  for (std::size_t d = 0; d < k; ++d) local = local * ch.sizes[d] + (index[d] - ch.offsets[d]);
  const std::uint64_t within = pos % c.inner;
  const std::uint64_t rows_left = ch.offsets[k - 1] + ch.sizes[k - 1] - index[k - 1];
  return {found, local * c.inner + within, std::min(rows_left * c.inner - within, end - pos)};
}

}  // namespace wavg::dcp
