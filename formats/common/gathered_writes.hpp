#pragma once
// Small writes to an output file gathered into few system calls. A model of 100k tiny tensors wrote each with a
// pwrite() of its own (a third of its convert's CPU time), and the engine's order (the plan's) is seldom the
// file's (safetensors sorts names: conv10 lies between conv1 and conv100), so gathering only writes that follow
// each other still made one call per few tensors. Here up to k_bytes of small writes wait in memory; then they are
// sorted by offset and every run of adjacent ones goes out as one pwrite(). A large write goes out at once, after
// what waits. Writes never overlap in a well-formed output (each element is written once); should two waiting
// ones overlap, all go out in the order they came, so the later wins as it would have.

#include <cstdint>
#include <string>
#include <vector>

namespace wavg {

class GatheredWrites {
 public:
  // Writes go to `fd`; errors name `display`.
  GatheredWrites(int& fd, const std::string& display) : m_fd(fd), m_display(display) {}
  // Writes `bytes` bytes of `src` at file offset `at`, now or by the next flush().
  void write(const void* src, std::uint64_t bytes, std::uint64_t at);
  // Writes everything waiting.
  void flush();

 private:
  static constexpr std::size_t k_bytes = 1 << 20;   // what may wait
  static constexpr std::size_t k_small = 64 << 10;  // a write at least this large goes out at once

  struct Piece {
    std::uint64_t at;    // in the file
    std::uint32_t from;  // in m_data
    std::uint32_t size;
  };

  int& m_fd;  // the writer's descriptor, which it opens after making this
  const std::string& m_display;
  std::string m_data;
  std::vector<Piece> m_pieces;
  std::string m_run;  // adjacent pieces, copied together for one pwrite()
};

}  // namespace wavg
