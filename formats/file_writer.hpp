#pragma once
// What the writers of one pre-sized output file share (safetensors, MXNet, NumPy .npz): the name messages give the
// output, the spec, the descriptor of the temporary file, opened, sized and closed with errors that name it, and
// write() of each tensor's values where the codec laid them out (m_data_at), small ones gathered into few system
// calls (gathered_writes.hpp).

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "common/gathered_writes.hpp"
#include "wavg/error.hpp"
#include "wavg/file_io.hpp"
#include "wavg/format.hpp"

namespace wavg {

class FileWriter : public Writer {
 public:
  ~FileWriter() override {
    if (m_fd >= 0) ::close(m_fd);
  }
  bool holds_template_values(std::size_t) const override { return false; }
  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    const std::size_t elem = dtype_size(m_spec.tensors[index].dtype);
    m_gathered.write(src, count * elem, m_data_at[index] + offset * elem);
  }
  // Closes the output; a codec with more to write at the end (a header, a zip's directory) does that first.
  void finish() override {
    m_gathered.flush();
    close_output(m_fd, m_display);
  }
  // The values this rank wrote reach the disk before rank 0 renames the file, which syncs only its own writes.
  std::string finish_part() override {
    m_gathered.flush();
    if (::fsync(m_fd) != 0) fail(m_display, std::string("cannot sync the output: ") + std::strerror(errno));
    close_output(m_fd, m_display);
    return {};
  }

 protected:
  FileWriter(const std::string& display_path, const OutputSpec& spec) : m_display(display_path), m_spec(spec) {}

  // Opens the temporary file the AtomicFile made, empty, with `flags` (O_WRONLY, or O_RDWR to read data back).
  void open_output(const std::string& tmp_path, int flags) {
    m_fd = ::open(tmp_path.c_str(), flags | O_TRUNC | O_CLOEXEC);
    if (m_fd < 0) fail(m_display, std::strerror(errno));
  }
  // Gives the output its final size before any data is written at their offsets.
  void size_output(std::uint64_t bytes) {
    if (::ftruncate(m_fd, static_cast<off_t>(bytes)) != 0)
      fail(m_display, std::string("cannot size the output: ") + std::strerror(errno));
  }

  std::string m_display;
  const OutputSpec& m_spec;
  int m_fd = -1;
  std::vector<std::uint64_t> m_data_at;  // per tensor, the file offset of its element 0

 private:
  GatheredWrites m_gathered{m_fd, m_display};
};

}  // namespace wavg
