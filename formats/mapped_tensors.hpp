#pragma once
// The part of a reader whose tensors lie whole, contiguous and in native byte order in one mapped file (safetensors,
// MXNet NDArray lists): read, view, release and prefetch from each tensor's file offset, so such a codec is its
// parsing and nothing else (ListedReader holds the accessors). The codec checks every offset and length against the
// file before add_tensor().

#include <cstdint>
#include <string>
#include <vector>

#include "listed_reader.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg {

class MappedTensorsReader : public ListedReader {
 public:
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override;
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void release(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) override;

 protected:
  // Maps `path` (Error, exit 1, when it is no regular file or cannot be mapped).
  MappedTensorsReader(std::string path, FormatId format) : ListedReader(path, format), m_file(std::move(path)) {}
  // Adds a tensor whose element 0 lies at byte `at` of the file.
  void add_tensor(TensorInfo tensor, std::uint64_t at);

  MappedFile m_file;

 private:
  // The file offset of element `offset` of tensor `index`.
  std::uint64_t file_offset(std::size_t index, std::uint64_t offset) const;

  std::vector<std::uint64_t> m_begin;  // per tensor, the file offset of its element 0
};

}  // namespace wavg
