#pragma once
// A .pt output keeps input 1's storages, so output tensors that are views of one storage in input 1 (a = base[0:6]
// and b = base[2:8]; w and w.t()) share elements in the output too. That is right only where both results agree on
// every shared element (every input holds the same views and the method works element by element); otherwise the
// later write would replace the earlier tensor's result there. SharedViews finds the views whose extents overlap,
// keeps a copy of what was written to their elements and who wrote it, and refuses, naming both tensors, the first
// block that would change an element another tensor already holds, and at the end a tensor left with input 1's
// values (copied, never written) whose elements another tensor changed. Identical views (tied weights, kept as
// aliases) get the same result by construction and are not watched.

#include <cstdint>
#include <string>
#include <vector>

#include "wavg/tensor.hpp"

namespace wavg::pytorch {

// Where an output tensor lies in the output file, and where input 1 held the same bytes.
struct OutputView {
  std::uint64_t begin = 0;                    // output file offset of element 0
  const std::vector<std::uint64_t>* stride;   // in elements; used when !contiguous
  bool contiguous = true;
  const unsigned char* original = nullptr;    // input 1's bytes of element 0 (its mapping)
};

class SharedViews {
 public:
  // Watches the overlapping views among `views` (one per output tensor of `tensors`). Refuses, naming both, views
  // of one storage with different dtypes and overlaps larger than wavg keeps a copy of.
  SharedViews(const std::vector<TensorInfo>& tensors, std::vector<OutputView> views, std::string display,
              std::string input1);
  // Tells whether tensor `index` shares elements with another view (its writes go through before_write).
  bool watched(std::size_t index) const { return m_region_of[index] != k_none; }
  // Checks the block about to be written at elements [offset, offset + count) of `index` against what other
  // tensors wrote there, and records it. Throws Error naming both tensors where they disagree.
  void before_write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src);
  // Checks the watched tensors that were never written (they keep input 1's values) against the writes of others.
  void at_finish() const;

 private:
  static constexpr std::uint32_t k_none = UINT32_MAX;
  struct Region {
    std::uint64_t lo = 0, hi = 0;       // output bytes [lo, hi)
    std::size_t elem = 0;               // every view's element size
    std::vector<unsigned char> shadow;  // the bytes written so far
    std::vector<std::uint32_t> owner;   // per element: the tensor that wrote it, or k_none
    const unsigned char* original = nullptr;  // input 1's bytes at lo
  };
  std::uint64_t element_at(std::size_t index, std::uint64_t flat) const;
  [[noreturn]] void refuse(std::size_t a, std::size_t b, const std::string& why) const;

  const std::vector<TensorInfo>& m_tensors;
  std::vector<OutputView> m_views;
  std::vector<Region> m_regions;
  std::vector<std::uint32_t> m_region_of;  // per output tensor
  std::vector<bool> m_written;
  std::string m_display, m_input1;
};

}  // namespace wavg::pytorch
