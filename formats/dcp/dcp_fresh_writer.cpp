// Writing a DCP folder from scratch (an input 1 that is not a DCP folder: a .safetensors or .pt file, a Hugging Face
// folder, a merge of passthrough slices), as a single process's torch.distributed.checkpoint.save of a flat state
// dict of those tensors writes it with torch 2.x's FileSystemWriter:
//
//   FOLDER/__0_0.distcp   per tensor, in the output's order, a whole torch.save archive of it (top folder "archive":
//                         data.pkl, byteorder, data/0 its elements, version), its offsets relative to its start;
//                         wavg starts each archive at a multiple of 64 (torch packs them: readers go by .metadata)
//   FOLDER/.metadata      per tensor TensorStorageMetadata(TensorProperties(dtype, torch.strided, False,
//                         contiguous, False), size, one chunk of offsets 0 and the tensor's sizes), its storage
//                         MetadataIndex(NAME, offsets 0, index 0) -> _StorageInfo('__0_0.distcp', archive offset,
//                         archive length); planner_data NAME -> (NAME,) (what dcp_to_torch_save rebuilds a flat
//                         state dict from); version "1.0.0" (torch's CURRENT_DCP_VERSION)
//   FOLDER/wavg.json      the provenance (a file DCP ignores)
//
// The engine writes each tensor's elements into its archive's data/0 in place; the archives' CRC-32s come from the
// bytes as written (ZipWriter). A DCP input 1 whose layout the output does not fit (--out-dtype) gives its tensors'
// TensorProperties and planner_data paths, and its bytes values (BytesStorageMetadata: an lr, a torchtitan
// train_state) follow the tensors as input 1's bytes. Other inputs' non-tensor values (a .pt's epoch) have no place
// here: the merge's warning names them as left out.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "dcp/dcp.hpp"
#include "pytorch/copied_files.hpp"
#include "pytorch/pytorch.hpp"
#include "pytorch/zip_layout.hpp"
#include "wavg/error.hpp"
#include "wavg/file_io.hpp"

namespace wavg::dcp {

namespace {

constexpr const char* k_rank_file = "__0_0.distcp";

class FreshDcpWriter final : public Writer {
 public:
  FreshDcpWriter(const std::string& tmp_dir, const std::string& display, const OutputSpec& spec)
      : m_tmp_dir(tmp_dir), m_display(display), m_spec(spec), m_out(tmp_dir, display) {
    // A distributed merge's other ranks (OutputSpec::part) lay out the same rank file and write their values into
    // the one rank 0 made, which writes the rest and joins their CRC-32 spans in finish().
    if (!spec.part) check_dcp_folder(display);
    refuse_optimizer_state();
    const int create = spec.part ? 0 : O_CREAT | O_EXCL;
    m_fd = ::open((tmp_dir + "/" + k_rank_file).c_str(), O_RDWR | create | O_CLOEXEC, 0666);
    if (m_fd < 0) fail(display, std::string("cannot create ") + k_rank_file + ": " + std::strerror(errno));
    lay_out();
    if (!spec.part) replace_dcp_folder(tmp_dir, display);
  }
  ~FreshDcpWriter() override {
    if (m_fd >= 0) ::close(m_fd);
  }
  FreshDcpWriter(const FreshDcpWriter&) = delete;
  FreshDcpWriter& operator=(const FreshDcpWriter&) = delete;

  bool holds_template_values(std::size_t) const override { return false; }

  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    const std::size_t elem = dtype_size(m_spec.tensors[index].dtype);
    m_zips[index]->pwrite_all(src, count * elem, m_data[index] + offset * elem);
  }

  std::string finish_part() override {
    if (::fsync(m_fd) != 0) fail(m_display, std::string("cannot sync ") + k_rank_file + ": " + std::strerror(errno));
    nlohmann::json parts = nlohmann::json::array();
    for (const auto& z : m_zips) parts.push_back(z->crc_spans());
    close_rank_file();
    return parts.dump();
  }

  void join_part(const std::string& part) override {
    const auto parts = nlohmann::json::parse(part).get<std::vector<std::string>>();
    WAVG_ASSERT(parts.size() == m_zips.size());
    for (std::size_t i = 0; i < parts.size(); ++i) m_zips[i]->join_crcs(parts[i]);
  }

  void finish() override {
    for (const auto& z : m_zips) z->finish();
    close_rank_file();
    m_out.add(".metadata", metadata_pickle(m_meta, m_display));
    m_out.finish(m_spec.provenance);
    verify_output(m_tmp_dir, m_display, m_spec);
  }

 private:
  void close_rank_file() {
    const int fd = m_fd;
    m_fd = -1;
    if (::close(fd) != 0) fail(m_display, std::string("cannot close ") + k_rank_file + ": " + std::strerror(errno));
  }

  // An optimizer's moments and hyper-parameters from an input that is not DCP would land here without the
  // optimizer's param_groups (a non-tensor value): torch could not load them into an optimizer, and wavg reading the
  // folder back would find no optimizer and take the moments for weights. Refused, naming the first one.
  void refuse_optimizer_state() const {
    if (dynamic_cast<const DcpReader*>(m_spec.template_input)) return;  // input 1's bytes values come along
    for (const TensorInfo& t : m_spec.tensors)
      if (t.role == Role::optimizer_state || t.role == Role::hyper_parameter)
        fail(m_display, "cannot write " + t.name + " (" + std::string(name_of(k_role_names, t.role)) +
                            ") to a DCP folder made from a non-DCP input: it holds tensors only, not the optimizer's "
                            "param_groups, so the moments would read back as weights; leave the optimizer out "
                            "(--exclude its names) or write .pt");
  }

  // Places every tensor's archive, writes what the engine does not (data.pkl, byteorder, version) and describes
  // each in .metadata.
  void lay_out() {
    m_meta.planner_data = true;
    m_meta.version = "1.0.0";
    // A DCP input 1 (whose layout does not fit: --out-dtype) gives each tensor it holds its properties and path.
    const auto* input = dynamic_cast<const DcpReader*>(m_spec.template_input);
    std::unordered_map<std::string, const Item*> from;
    if (input)
      for (const Item& it : input->dcp_metadata().items)
        if (it.tensor) from.emplace(it.name, &it);
    std::uint64_t at = 0;
    for (const TensorInfo& t : m_spec.tensors) {
      std::string pickle = "\x80\x02";
      pytorch::pickle_tensor(pickle, t, "0");
      pickle += '.';
      auto zip = std::make_unique<pytorch::ZipWriter>(
          m_fd, m_display, at, m_spec.part ? pytorch::ZipSizing::by_caller : pytorch::ZipSizing::at_start);
      zip->add_bytes("archive/data.pkl", std::move(pickle));
      zip->add_bytes("archive/byteorder", "little");
      zip->add("archive/data/0", t.bytes());
      zip->add_bytes("archive/version", "3\n");
      m_data.push_back(zip->lay_out()[2]);

      Item item;
      item.name = t.name;
      item.tensor = true;
      item.dtype = t.dtype;
      item.shape = t.shape;
      item.chunks.push_back({Shape(t.shape.size(), 0), t.shape, {k_rank_file, at, zip->size()}});
      const auto was = from.find(t.name);
      if (was != from.end()) item.properties = was->second->properties;
      if (was != from.end() && was->second->planned && !was->second->planner.empty())
        item.planner = was->second->planner;
      else
        item.planner.push_back({.key = t.name});
      item.planned = true;
      m_meta.items.push_back(std::move(item));
      at += (zip->size() + 63) / 64 * 64;
      m_zips.push_back(std::move(zip));
    }
    if (input) at = copy_bytes_values(*input, at);
    if (m_spec.part) return;  // rank 0 sizes the file
    if (::ftruncate(m_fd, static_cast<off_t>(at)) != 0)
      fail(m_display, std::string("cannot size ") + k_rank_file + ": " + std::strerror(errno));
  }

  // Appends input 1's bytes values (an lr, a train_state: torch.save'd objects) from `at`, as they are, and
  // returns the end.
  std::uint64_t copy_bytes_values(const DcpReader& input, std::uint64_t at) {
    std::unordered_map<std::string, std::size_t> file_of;
    for (std::size_t f = 0; f < input.data_files().size(); ++f) file_of.emplace(input.data_files()[f], f);
    for (const Item& it : input.dcp_metadata().items) {
      if (it.tensor) continue;
      const MappedFile& file = input.data_file(file_of.at(it.where.file));  // the reader checked the storage
      if (!m_spec.part) pwrite_all(m_fd, file.data() + it.where.offset, it.where.length, at, m_display);
      Item item = it;
      item.where = {k_rank_file, at, it.where.length};
      if (!item.planned || item.planner.empty()) item.planner = {{.key = it.name}};
      item.planned = true;
      m_meta.items.push_back(std::move(item));
      at += it.where.length;
    }
    return at;
  }

  std::string m_tmp_dir;
  std::string m_display;
  const OutputSpec& m_spec;
  pytorch::CopiedFiles m_out;  // .metadata and wavg.json
  int m_fd = -1;
  std::vector<std::unique_ptr<pytorch::ZipWriter>> m_zips;  // per tensor, its archive
  std::vector<std::uint64_t> m_data;                        // per tensor, where its elements go
  Metadata m_meta;
};

}  // namespace

std::unique_ptr<Writer> create_fresh_dcp_writer(const std::string& tmp_dir, const std::string& display_path,
                                                const OutputSpec& spec) {
  return std::make_unique<FreshDcpWriter>(tmp_dir, display_path, spec);
}

}  // namespace wavg::dcp
