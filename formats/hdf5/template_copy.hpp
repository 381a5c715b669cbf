#pragma once
// The HDF5 writer's output starts as input 1 byte for byte, but the merge overwrites every averaged tensor's bytes
// anyway: copying them first would write the largest part of the file twice. So input 1 is copied except for the
// byte ranges the writer expects to overwrite (the "holes"), and any hole nobody wrote is filled from input 1 at
// the end. The result is always input 1 with the written ranges replaced.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace wavg {

using ByteRange = std::pair<std::uint64_t, std::uint64_t>;  // [begin, end)

class TemplateCopy {
 public:
  // Makes the open, empty output `out_fd` as long as `source` and copies everything outside `holes` into it.
  TemplateCopy(const std::string& source, int out_fd, std::vector<ByteRange> holes, std::string display);
  ~TemplateCopy();
  TemplateCopy(const TemplateCopy&) = delete;
  TemplateCopy& operator=(const TemplateCopy&) = delete;

  // Copies one range of the source to the same offset of the output.
  void fill(ByteRange range);

 private:
  int m_in = -1;
  int m_out = -1;
  std::uint64_t m_size = 0;
  std::string m_source, m_display;
};

}  // namespace wavg
