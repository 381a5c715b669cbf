// Writing a DCP folder in input 1's layout: its files copied, the output's tensors written into their chunks'
// storages in place, each touched archive's CRC-32s recomputed (layout in dcp.hpp).

#include "dcp/dcp.hpp"
#include "pytorch/copied_files.hpp"
#include "wavg/error.hpp"

namespace wavg::dcp {

namespace {

class DcpWriter final : public Writer {
 public:
  DcpWriter(const std::string& tmp_dir, const std::string& display, const OutputSpec& spec)
      : m_display(display), m_spec(spec), m_out(tmp_dir, display) {
    m_input = dynamic_cast<const DcpReader*>(spec.template_input);
    if (!m_input) fail_usage(display + ": a DCP folder output keeps input 1's layout, so input 1 must be a DCP folder");
    m_source = pytorch::source_indices(*m_input, spec.tensors, display, "a DCP folder output");
    // The data files first: copy f is data file f.
    for (std::size_t f = 0; f < m_input->data_files().size(); ++f)
      m_out.copy(m_input->data_files()[f], m_input->data_file(f));
    m_out.copy(".metadata", MappedFile(m_input->folder() + "/.metadata"));
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
      m_out.write(ch.file, static_cast<const unsigned char*>(src) + (pos - offset) * elem, r.count * elem,
                  ch.begin + r.at * elem);
      pos += r.count;
    }
  }

  void finish() override {
    for (const std::size_t s : m_source)
      for (const Chunk& ch : m_input->chunks(s).chunks)
        m_out.patch_crc(ch.file, m_input->data_file(ch.file), ch.archive, ch.storage);
    m_out.finish(m_spec.provenance);
  }

 private:
  std::string m_display;
  const OutputSpec& m_spec;
  pytorch::CopiedFiles m_out;
  const DcpReader* m_input = nullptr;
  std::vector<std::size_t> m_source;  // per output tensor, its index in input 1
};

}  // namespace

std::unique_ptr<Writer> create_dcp_writer(const std::string& tmp_dir, const std::string& display_path,
                                          const OutputSpec& spec) {
  return std::make_unique<DcpWriter>(tmp_dir, display_path, spec);
}

}  // namespace wavg::dcp
