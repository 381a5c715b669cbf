// Serving a DeepSpeed tensor's elements from its pieces (stretches of the ranks' mapped partitions, in element
// order): copied across pieces, lent straight from the mapping within one, and the points where two pieces meet
// told to the engine, which ends its blocks there so that every block is lent whole.

#include <algorithm>
#include <cstring>

#include "deepspeed/deepspeed.hpp"
#include "wavg/error.hpp"

namespace wavg::deepspeed {

template <typename F>
void DeepspeedReader::for_pieces(std::size_t index, std::uint64_t offset, std::uint64_t count, F f) const {
  WAVG_ASSERT(offset + count <= m_tensors[index].count());
  std::uint64_t done = 0;
  for (const Piece& p : m_pieces[index]) {
    if (count == 0) return;
    if (offset >= p.count) {
      offset -= p.count;
      continue;
    }
    const std::uint64_t n = std::min(count, p.count - offset);
    f(p, offset, n, done);
    done += n;
    count -= n;
    offset = 0;
  }
}

void DeepspeedReader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  for_pieces(index, offset, count, [&](const Piece& p, std::uint64_t first, std::uint64_t n, std::uint64_t done) {
    std::memcpy(static_cast<unsigned char*>(dst) + done * elem, m_files[p.file]->data() + p.at + first * elem,
                n * elem);
  });
}

const void* DeepspeedReader::view(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  const unsigned char* at = nullptr;
  bool whole = false;
  for_pieces(index, offset, count, [&](const Piece& p, std::uint64_t first, std::uint64_t n, std::uint64_t done) {
    if (done > 0) return;
    at = m_files[p.file]->data() + p.at + first * elem;
    whole = n == count;  // at any byte offset: the kernels load elements from any address
  });
  return whole ? at : nullptr;
}

void DeepspeedReader::release(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  for_pieces(index, offset, count, [&](const Piece& p, std::uint64_t first, std::uint64_t n, std::uint64_t) {
    m_files[p.file]->release(p.at + first * elem, p.at + (first + n) * elem);
  });
}

void DeepspeedReader::prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  for_pieces(index, offset, count, [&](const Piece& p, std::uint64_t first, std::uint64_t n, std::uint64_t) {
    m_files[p.file]->prefetch(p.at + first * elem, p.at + (first + n) * elem);
  });
}

std::vector<std::uint64_t> DeepspeedReader::boundaries(std::size_t index) const {
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  const std::vector<Piece>& pieces = m_pieces[index];
  std::vector<std::uint64_t> out;
  std::uint64_t pos = 0;
  for (std::size_t i = 0; i + 1 < pieces.size(); ++i) {
    pos += pieces[i].count;
    // Two pieces that follow each other in one file are one stretch of the mapping.
    const Piece &p = pieces[i], &q = pieces[i + 1];
    if (q.file != p.file || q.at != p.at + p.count * elem) out.push_back(pos);
  }
  return out;
}

}  // namespace wavg::deepspeed
