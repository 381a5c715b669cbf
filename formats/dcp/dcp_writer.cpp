// Writing a DCP folder in input 1's layout: its files copied, the output's tensors written into their chunks'
// storages in place, each touched archive's CRC-32s recomputed (layout in dcp.hpp).

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "dcp/dcp.hpp"
#include "wavg/error.hpp"
#include "wavg/file_io.hpp"

namespace wavg::dcp {

namespace {

constexpr std::uint64_t k_block = 64ull << 20;

class DcpWriter final : public Writer {
 public:
  DcpWriter(const std::string& tmp_dir, const std::string& display, const OutputSpec& spec)
      : m_dir(tmp_dir), m_display(display), m_spec(spec) {
    m_input = dynamic_cast<const DcpReader*>(spec.template_input);
    if (!m_input) fail_usage(display + ": a DCP folder output keeps input 1's layout, so input 1 must be a DCP folder");
    std::unordered_map<std::string, std::size_t> by_name;
    for (std::size_t i = 0; i < m_input->tensors().size(); ++i) by_name.emplace(m_input->tensors()[i].name, i);
    for (const TensorInfo& t : spec.tensors) {
      const auto it = by_name.find(t.name);
      if (it == by_name.end() || m_input->tensors()[it->second].shape != t.shape ||
          m_input->tensors()[it->second].dtype != t.dtype)
        fail(display, "tensor " + t.name + " (" + std::string(dtype_name(t.dtype)) + " " + shape_string(t.shape) +
                          ") is not in input 1 with that dtype and shape; a DCP output keeps input 1's layout");
      m_source.push_back(it->second);
    }
    // The copied .metadata still lists every tensor of input 1 and the data files hold their bytes, so a tensor the
    // plan leaves out would come back with input 1's values (--optimizer-state drop, --exclude, intersection).
    if (!spec.dropped.empty())
      fail(display, "input 1's tensor " + spec.dropped.front() +
                        (spec.dropped.size() > 1 ? " (and " + std::to_string(spec.dropped.size() - 1) + " more)" : "") +
                        " would be left out (--optimizer-state drop, --exclude, --tensors intersection), but a DCP "
                        "output keeps input 1's .metadata and data files whole; keep it, or write another format");
    copy(m_input->folder() + "/.metadata", nullptr);
    for (std::size_t f = 0; f < m_input->data_files().size(); ++f) {
      m_fds.push_back(copy(m_input->folder() + "/" + m_input->data_files()[f], &m_input->data_file(f)));
    }
  }

  ~DcpWriter() override {
    for (const int fd : m_fds)
      if (fd >= 0) ::close(fd);
  }

  // The copies hold the template's values, which is input 1 only when input 1 is a DCP folder that fits; the
  // non-averaged tensors are small, so they are always written from input 1, as the plan says.
  bool holds_template_values(std::size_t) const override { return false; }

  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    const TensorInfo& t = m_input->tensors()[m_source[index]];
    const TensorChunks& c = m_input->chunks(m_source[index]);
    const std::size_t elem = dtype_size(t.dtype);
    std::size_t hint = 0;
    for (std::uint64_t pos = offset, end = offset + count; pos < end;) {
      const Run r = run_at(t, c, pos, end, hint);
      const Chunk& ch = c.chunks[r.chunk];
      pwrite_all(m_fds[ch.file], static_cast<const unsigned char*>(src) + (pos - offset) * elem, r.count * elem,
                 ch.begin + r.at * elem, m_display);
      pos += r.count;
    }
  }

  void finish() override {
    for (const std::size_t s : m_source)
      for (const Chunk& ch : m_input->chunks(s).chunks) patch_crc(ch);
    const std::string text =
        nlohmann::json(m_spec.provenance.entries()).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) +
        "\n";
    const int fd = create("wavg.json");
    pwrite_all(fd, text.data(), text.size(), 0, m_display);
    close_checked(fd);
    for (int& fd_out : m_fds) {
      close_checked(fd_out);
      fd_out = -1;
    }
  }

 private:
  int create(const std::string& name) const {
    const int fd = ::open((m_dir + "/" + name).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) fail(m_display, "cannot create " + name + ": " + std::strerror(errno));
    return fd;
  }
  void close_checked(int fd) const {
    if (::close(fd) != 0) fail(m_display, std::string("cannot close an output file: ") + std::strerror(errno));
  }
  // Copies an input file into the folder, from the reader's mapping when it has one; returns the open copy.
  int copy(const std::string& from, const MappedFile* mapped) {
    const std::string name = from.substr(from.find_last_of('/') + 1);
    std::unique_ptr<MappedFile> own;
    if (!mapped) mapped = (own = std::make_unique<MappedFile>(from)).get();
    const int fd = create(name);
    for (std::uint64_t at = 0; at < mapped->size(); at += k_block) {
      const std::uint64_t n = std::min(k_block, mapped->size() - at);
      pwrite_all(fd, mapped->data() + at, n, at, m_display);
      mapped->release(at, at + n);
    }
    if (!own) return fd;
    close_checked(fd);
    return -1;
  }
  std::uint32_t crc_of(int fd, std::uint64_t at, std::uint64_t size) const {
    std::vector<unsigned char> buf(std::min<std::uint64_t>(size, k_block));
    uLong crc = crc32(0, nullptr, 0);
    for (std::uint64_t done = 0; done < size;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - done));
      const ssize_t got = ::pread(fd, buf.data(), n, static_cast<off_t>(at + done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) fail(m_display, std::string("cannot read back the output: ") + std::strerror(errno));
      crc = crc32(crc, buf.data(), static_cast<uInt>(got));
      done += static_cast<std::uint64_t>(got);
    }
    return static_cast<std::uint32_t>(crc);
  }
  // The storage entry's CRC-32 in the central directory, and in the data descriptor after its data (torch's
  // writer streams entries, so its local headers hold 0) or else in the local header.
  void patch_crc(const Chunk& ch) const {
    const int fd = m_fds[ch.file];
    const std::uint64_t data = ch.archive + ch.storage.data_offset;
    const std::uint32_t crc = crc_of(fd, data, ch.storage.size);
    unsigned char le[4] = {static_cast<unsigned char>(crc), static_cast<unsigned char>(crc >> 8),
                           static_cast<unsigned char>(crc >> 16), static_cast<unsigned char>(crc >> 24)};
    pwrite_all(fd, le, 4, ch.archive + ch.storage.central + 16, m_display);
    if (!ch.storage.descriptor) {
      pwrite_all(fd, le, 4, ch.archive + ch.storage.local_header + 14, m_display);
      return;
    }
    const std::uint64_t after = data + ch.storage.size;
    const unsigned char* in = m_input->data_file(ch.file).data();
    const bool signature =
        m_input->data_file(ch.file).contains(after, 4) && std::memcmp(in + after, "PK\x07\x08", 4) == 0;
    pwrite_all(fd, le, 4, after + (signature ? 4 : 0), m_display);
  }

  std::string m_dir, m_display;
  const OutputSpec& m_spec;
  const DcpReader* m_input = nullptr;
  std::vector<std::size_t> m_source;  // per output tensor, its index in input 1
  std::vector<int> m_fds;             // per data file of input 1, its copy
};

}  // namespace

std::unique_ptr<Writer> create_dcp_writer(const std::string& tmp_dir, const std::string& display_path,
                                          const OutputSpec& spec) {
  return std::make_unique<DcpWriter>(tmp_dir, display_path, spec);
}

}  // namespace wavg::dcp
