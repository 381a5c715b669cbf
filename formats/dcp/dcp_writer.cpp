// Writing a DCP folder in input 1's layout: its files copied (or, when tensors are left out, rank files of only the
// kept chunks and a fresh .metadata) less the chunks' elements, which the engine writes into their storages in place,
// each touched archive's CRC-32s computed from the bytes written (layout in dcp.hpp).

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <unordered_map>

#include "dcp/dcp.hpp"
#include "pytorch/copied_files.hpp"
#include "wavg/atomic_directory.hpp"
#include "wavg/error.hpp"
#include "wavg/removal.hpp"

namespace wavg::dcp {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t k_none = SIZE_MAX;

class DcpWriter final : public Writer {
 public:
  DcpWriter(const std::string& tmp_dir, const std::string& display, const OutputSpec& spec)
      : m_tmp_dir(tmp_dir),
        m_display(display),
        m_spec(spec),
        m_out(tmp_dir, display, spec.part ? pytorch::CopyRole::part : pytorch::CopyRole::whole) {
    // A distributed merge's other ranks (OutputSpec::part) lay out the same copies and write their values into
    // the files rank 0 made; rank 0 checked the folder, and joins their CRC-32 spans in finish().
    if (!spec.part) check_dcp_folder(display);
    m_input = dynamic_cast<const DcpReader*>(spec.template_input);
    m_source = pytorch::source_indices(*m_input, spec.tensors, display, "a DCP folder output");
    if (m_source.size() == m_input->tensors().size())
      copy_whole();
    else
      copy_kept();
    if (!spec.part) replace_dcp_folder(tmp_dir, display);
  }

  // The copies hold the template's values, which is input 1 only when input 1 is a DCP folder that fits; the
  // non-averaged tensors are small, so they are always written from input 1, as the plan says.
  bool holds_template_values(std::size_t) const override { return false; }

  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    const std::size_t s = m_source[index];
    const TensorInfo& t = m_input->tensors()[s];
    const TensorChunks& c = m_input->chunks(s);
    const std::size_t elem = dtype_size(t.dtype);
    std::size_t hint = 0;
    for (std::uint64_t pos = offset, end = offset + count; pos < end;) {
      const Run r = run_at(t, c, pos, end, hint);
      const Chunk& ch = c.chunks[r.chunk];
      m_out.write(m_copy[ch.file], static_cast<const unsigned char*>(src) + (pos - offset) * elem, r.count * elem,
                  m_archive[s][r.chunk] + (ch.begin - ch.archive) + r.at * elem);
      pos += r.count;
    }
  }

  void finish() override {
    m_out.finish(m_spec.provenance);
    verify_output(m_tmp_dir, m_display, m_spec);
  }
  std::string finish_part() override { return m_out.finish_part(); }
  void join_part(const std::string& part) override { m_out.join_part(part); }

 private:
  // Fills in, per data file, the chunks' elements the engine writes (every element of every output tensor, each
  // once: holds_template_values() is false and the chunks cover each tensor exactly) and their storage entries,
  // whose CRC-32s change; m_archive gives where each chunk's archive now lies.
  void describe(std::vector<pytorch::CopySpec>& specs) const {
    for (const std::size_t s : m_source) {
      const std::size_t elem = dtype_size(m_input->tensors()[s].dtype);
      for (std::size_t k = 0; k < m_input->chunks(s).chunks.size(); ++k) {
        const Chunk& ch = m_input->chunks(s).chunks[k];
        std::uint64_t n = 1;
        for (const std::uint64_t d : ch.sizes) n *= d;
        const std::uint64_t archive = m_archive[s][k];
        specs[ch.file].written.emplace_back(archive + (ch.begin - ch.archive), n * elem);
        specs[ch.file].entries.push_back({archive, ch.archive, ch.storage});
      }
    }
  }

  // Every tensor is kept: input 1's files as they are, .metadata byte for byte.
  void copy_whole() {
    m_archive.resize(m_input->tensors().size());
    for (const std::size_t s : m_source)
      for (const Chunk& ch : m_input->chunks(s).chunks) m_archive[s].push_back(ch.archive);
    std::vector<pytorch::CopySpec> specs(m_input->data_files().size());
    describe(specs);
    for (std::size_t f = 0; f < m_input->data_files().size(); ++f)
      m_copy.push_back(m_out.copy(m_input->data_files()[f], m_input->data_file(f), specs[f]));
    m_out.copy(".metadata", MappedFile(m_input->folder() + "/.metadata"));
  }

  // Some tensors are left out: each rank file keeps only the storages the kept items name, in input 1's order, and
  // a fresh .metadata names them where they now lie.
  void copy_kept() {
    const Metadata& in = m_input->dcp_metadata();
    std::vector<bool> kept(m_input->tensors().size(), false);
    for (const std::size_t s : m_source) kept[s] = true;
    Metadata out{{}, in.planner_data, in.version};
    std::size_t tensor = 0;
    for (const Item& item : in.items)
      if (!item.tensor || kept[tensor++]) out.items.push_back(item);

    std::unordered_map<std::string, std::size_t> file_of;
    for (std::size_t f = 0; f < m_input->data_files().size(); ++f) file_of.emplace(m_input->data_files()[f], f);
    // Per data file, each kept storage (offset, length) and, once laid out, its new offset.
    std::vector<std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t>> moved(file_of.size());
    auto keep = [&](const Storage& s) { moved[file_of.at(s.file)].emplace(std::make_pair(s.offset, s.length), 0); };
    for (const Item& item : out.items) {
      if (!item.tensor) keep(item.where);
      for (const ChunkMeta& c : item.chunks) keep(c.where);
    }
    std::vector<pytorch::CopySpec> specs(file_of.size());
    for (std::size_t f = 0; f < moved.size(); ++f) {
      std::uint64_t at = 0;
      for (auto& [range, to] : moved[f]) {
        specs[f].ranges.push_back(range);
        to = at;
        at += range.second;
      }
    }
    m_archive.resize(m_input->tensors().size());
    for (const std::size_t s : m_source)
      for (const Chunk& ch : m_input->chunks(s).chunks)
        m_archive[s].push_back(moved[ch.file].at({ch.archive, ch.length}));
    describe(specs);
    m_copy.assign(file_of.size(), k_none);
    for (std::size_t f = 0; f < moved.size(); ++f)
      if (!moved[f].empty())  // else a rank whose every chunk is left out
        m_copy[f] = m_out.copy(m_input->data_files()[f], m_input->data_file(f), specs[f]);
    auto place = [&](Storage& s) { s.offset = moved[file_of.at(s.file)].at({s.offset, s.length}); };
    for (Item& item : out.items) {
      if (!item.tensor) place(item.where);
      for (ChunkMeta& c : item.chunks) place(c.where);
    }
    m_out.add(".metadata", metadata_pickle(out, m_display));
  }

  std::string m_tmp_dir;
  std::string m_display;
  const OutputSpec& m_spec;
  pytorch::CopiedFiles m_out;
  const DcpReader* m_input = nullptr;
  std::vector<std::size_t> m_source;                  // per output tensor, its index in input 1
  std::vector<std::size_t> m_copy;                    // per data file of input 1, its copy in m_out
  std::vector<std::vector<std::uint64_t>> m_archive;  // per tensor of input 1 and chunk, its archive's new offset
};

}  // namespace

void check_dcp_folder(const std::string& display) {
  check_model_folder(
      display, [&] { return fs::is_regular_file(fs::symlink_status(fs::path(display) / ".metadata")); },
      "distributed checkpoint (.metadata)");
}

// An existing DCP folder (--force): DCP's loader reads .metadata first, so it is placed last, and the old
// checkpoint's data files (torch's names, __R_I.distcp, plain files) that the new one lacks go; others stay.
void replace_dcp_folder(const std::string& tmp_dir, const std::string& display) {
  set_switch_files(tmp_dir, {".metadata"});
  static const std::regex k_data_file(R"(__[0-9]+_[0-9]+\.distcp)");
  // removal.hpp's rule; AtomicDirectory replaces an existing folder only with --force.
  const OwnFiles own{display,
                     "distributed checkpoint data file",
                     [](const std::string& name) { return std::regex_match(name, k_data_file); },
                     {}};
  std::error_code ec;
  if (fs::is_regular_file(fs::path(display) / ".metadata", ec))
    for (const std::string& name : removable_files(own, files_named_like(own), Overwrite::yes))
      retire_in_folder(tmp_dir, name);
}

std::unique_ptr<Writer> create_dcp_writer(const std::string& tmp_dir, const std::string& display_path,
                                          const OutputSpec& spec) {
  // Input 1's layout when it is a DCP folder holding every output tensor with its dtype and shape; else (a
  // .safetensors or .pt input 1, a merge of passthrough slices, --out-dtype) one rank file of whole tensors.
  const auto* input = dynamic_cast<const DcpReader*>(spec.template_input);
  bool fits = input != nullptr;
  if (input) {
    std::unordered_map<std::string, const TensorInfo*> by_name;
    for (const TensorInfo& t : input->tensors()) by_name.emplace(t.name, &t);
    for (const TensorInfo& t : spec.tensors) {
      const auto it = by_name.find(t.name);
      fits = fits && it != by_name.end() && it->second->dtype == t.dtype && it->second->shape == t.shape;
    }
  }
  if (!fits) return create_fresh_dcp_writer(tmp_dir, display_path, spec);
  return std::make_unique<DcpWriter>(tmp_dir, display_path, spec);
}

}  // namespace wavg::dcp
