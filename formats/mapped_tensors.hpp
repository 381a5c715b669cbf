#pragma once
// The part of a reader whose tensors' values lie in mapped files, in native byte order, as runs of consecutive
// elements (MappedPiece): read, view, release and prefetch are written once here over the runs a codec names, so
// such a codec is its parsing and its pieces() (ListedReader holds the accessors). A tensor may lie whole in one
// file (safetensors, MXNet NDArray lists: MappedTensorsReader; a TensorFlow data shard) or in pieces (a DCP
// tensor's chunks, a Flax chunked array). The codec checks every offset and length against its files first.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "listed_reader.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg {

// `count` consecutive elements of a tensor, lying consecutively in `file` from byte `at`; `into` is the place of
// the first among the elements asked for.
struct MappedPiece {
  const MappedFile* file = nullptr;
  std::uint64_t at = 0;
  std::uint64_t into = 0;
  std::uint64_t count = 0;
};

class MappedPiecesReader : public ListedReader {
 public:
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override;
  // Lends the mapping when one piece holds the whole range, at whatever byte address (the kernels load elements
  // from any address; a DCP chunk's data follow a torch.save archive of odd length); a range over two pieces goes
  // through read().
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void release(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) override;

 protected:
  using ListedReader::ListedReader;
  using PieceFn = std::function<bool(const MappedPiece&)>;
  // Calls `f` with the pieces of elements [offset, offset + count) of tensor `index`, in order, none empty, until
  // `f` returns false.
  virtual void pieces(std::size_t index, std::uint64_t offset, std::uint64_t count, const PieceFn& f) const = 0;
};

// A reader whose every tensor lies whole and contiguous in one mapped file.
class MappedTensorsReader : public MappedPiecesReader {
 protected:
  // Maps `path` (Error, exit 1, when it is no regular file or cannot be mapped).
  MappedTensorsReader(std::string path, FormatId format) : MappedPiecesReader(path, format), m_file(std::move(path)) {}
  // Adds a tensor whose element 0 lies at byte `at` of the file.
  void add_tensor(TensorInfo tensor, std::uint64_t at);
  void pieces(std::size_t index, std::uint64_t offset, std::uint64_t count, const PieceFn& f) const override;

  MappedFile m_file;

 private:
  std::vector<std::uint64_t> m_begin;  // per tensor, the file offset of its element 0
};

}  // namespace wavg
