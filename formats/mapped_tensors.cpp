#include "mapped_tensors.hpp"

#include <cstring>

#include "wavg/error.hpp"

namespace wavg {

void MappedTensorsReader::add_tensor(TensorInfo tensor, std::uint64_t at) {
  m_tensors.push_back(std::move(tensor));
  m_begin.push_back(at);
}

std::uint64_t MappedTensorsReader::file_offset(std::size_t index, std::uint64_t offset) const {
  WAVG_ASSERT(index < m_tensors.size() && offset <= m_tensors[index].count());
  return m_begin[index] + offset * dtype_size(m_tensors[index].dtype);
}

void MappedTensorsReader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  WAVG_ASSERT(offset + count <= m_tensors[index].count());
  std::memcpy(dst, m_file.data() + file_offset(index, offset), count * dtype_size(m_tensors[index].dtype));
}

const void* MappedTensorsReader::view(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  WAVG_ASSERT(offset + count <= m_tensors[index].count());
  const std::uint64_t at = file_offset(index, offset);
  // Kernels load whole elements: a tensor at an offset that is not a multiple of its element size (safetensors
  // allows any header length, MXNet's legacy headers have odd lengths) is copied into an aligned buffer by read().
  return at % dtype_size(m_tensors[index].dtype) == 0 ? m_file.data() + at : nullptr;
}

void MappedTensorsReader::release(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  m_file.release(file_offset(index, offset), file_offset(index, offset + count));
}

void MappedTensorsReader::prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  m_file.prefetch(file_offset(index, offset), file_offset(index, offset + count));
}

}  // namespace wavg
