// The .npz writer (layout in npz.hpp): one stored `.npy` member per tensor, laid out by the torch zip writer
// (data on 64-byte boundaries, CRC-32s at the end), each header written at once and the data in place.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "file_writer.hpp"
#include "npz/npz.hpp"
#include "pytorch/zip_layout.hpp"
#include "wavg/error.hpp"
#include "wavg/file_io.hpp"

namespace wavg {

namespace {

class NpzWriter final : public FileWriter {
 public:
  NpzWriter(const std::string& tmp_path, const std::string& display_path, const OutputSpec& spec)
      : FileWriter(display_path, spec) {
    std::vector<std::string> headers;
    for (const TensorInfo& t : spec.tensors) {
      if (t.dtype == DType::bf16)
        fail(display_path, t.name + ": bfloat16 has no numpy dtype; write it with --out-dtype float32");
      if (!pytorch::is_plain_entry_name(t.name + ".npy"))
        fail(display_path, printable(t.name) +
                               ": an .npz member of this name would not be a plain relative path ('..', a leading "
                               "slash, a backslash, a drive letter or a control character); leave it out (--exclude) "
                               "or write another format");
      headers.push_back(npy_header(t));
    }
    // Read and write: the zip writer reads the data back for their CRC-32s.
    open_output(tmp_path, O_RDWR);
    m_zip.emplace(m_fd, display_path);
    for (std::size_t i = 0; i < spec.tensors.size(); ++i)
      m_zip->add(spec.tensors[i].name + ".npy", headers[i].size() + spec.tensors[i].bytes());
    const std::vector<std::uint64_t> at = m_zip->lay_out();
    for (std::size_t i = 0; i < headers.size(); ++i) {
      m_zip->pwrite_all(headers[i].data(), headers[i].size(), at[i]);
      m_data_at.push_back(at[i] + headers[i].size());
    }
  }

  // Through the zip writer, which notes what is written for the entries' CRC-32s.
  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    const std::size_t elem = dtype_size(m_spec.tensors[index].dtype);
    m_zip->pwrite_all(src, count * elem, m_data_at[index] + offset * elem);
  }

  void finish() override {
    m_zip->finish();
    FileWriter::finish();
  }

 private:
  std::optional<pytorch::ZipWriter> m_zip;
};

}  // namespace

std::unique_ptr<Writer> create_npz_writer(const std::string& tmp_path, const std::string& display_path,
                                          const OutputSpec& spec) {
  return std::make_unique<NpzWriter>(tmp_path, display_path, spec);
}

}  // namespace wavg
