#include "mapped_tensors.hpp"

#include <cstring>

#include "wavg/error.hpp"

namespace wavg {

void MappedPiecesReader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  auto* out = static_cast<unsigned char*>(dst);
  pieces(index, offset, count, [&](const MappedPiece& p) {
    std::memcpy(out + p.into * elem, p.file->data() + p.at, p.count * elem);
    return true;
  });
}

const void* MappedPiecesReader::view(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const void* found = nullptr;
  pieces(index, offset, count, [&](const MappedPiece& p) {
    if (p.count == count) found = p.file->data() + p.at;
    return false;
  });
  return found;
}

void MappedPiecesReader::release(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  pieces(index, offset, count, [&](const MappedPiece& p) {
    p.file->release(p.at, p.at + p.count * elem);
    return true;
  });
}

void MappedPiecesReader::prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  pieces(index, offset, count, [&](const MappedPiece& p) {
    p.file->prefetch(p.at, p.at + p.count * elem);
    return true;
  });
}

void MappedTensorsReader::add_tensor(TensorInfo tensor, std::uint64_t at) {
  m_tensors.push_back(std::move(tensor));
  m_begin.push_back(at);
}

void MappedTensorsReader::pieces(std::size_t index, std::uint64_t offset, std::uint64_t count, const PieceFn& f) const {
  WAVG_ASSERT(index < m_tensors.size() && offset + count <= m_tensors[index].count());
  if (count > 0) f({&m_file, m_begin[index] + offset * dtype_size(m_tensors[index].dtype), 0, count});
}

}  // namespace wavg
