// Writing PEFT adapter folders: adapter_model.safetensors through the safetensors writer (or adapter_model.bin
// through the torch.save writer), and input 1's adapter_config.json beside it, its ranks rewritten where the
// output's factors have others (layout in peft.hpp).

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "hf/hf.hpp"
#include "peft/peft.hpp"
#include "pytorch/pytorch.hpp"
#include "safetensors/safetensors.hpp"
#include "wavg/atomic_directory.hpp"
#include "wavg/error.hpp"
#include "wavg/file_io.hpp"
#include "wavg/free_space.hpp"

namespace wavg::peft {

namespace {

namespace fs = std::filesystem;

constexpr const char* k_config = "adapter_config.json";

// The two weights files; peft loads the safetensors one when both are there, so writing one retires the other.
enum class WeightsFile { safetensors, bin };
const char* file_name(WeightsFile f) {
  return f == WeightsFile::safetensors ? "adapter_model.safetensors" : "adapter_model.bin";
}

// rank_pattern's key for a module: its plain name. peft 0.13 looks a key up by the module's name when no key
// matches `.*\.KEY$` (which a whole path starting at the model's root never does), later versions match
// `(.*\.)?(KEY)$`, and a module path's dots match themselves either way; an escaped name (model\.layers\.0...)
// would be found by neither in 0.13.

class AdapterWriter final : public Writer {
 public:
  AdapterWriter(WeightsFile file, const std::string& tmp_dir, const std::string& display, const OutputSpec& spec)
      : m_dir(tmp_dir), m_display(display), m_spec(spec) {
    const char* weights = file_name(file);
    const char* other = file_name(file == WeightsFile::safetensors ? WeightsFile::bin : WeightsFile::safetensors);
    m_template = dynamic_cast<const AdapterReader*>(spec.template_input);
    if (!m_template && !given_config())
      throw Error(ExitCode::usage, display,
                  "an adapter folder takes its adapter_config.json from input 1, which is no PEFT adapter");
    // --force replaces the adapter in an adapter folder (or fills an empty one), nothing else of the folder.
    check_model_folder(
        display, [&] { return looks_like_peft(display); }, "PEFT adapter");
    set_switch_files(m_dir, {k_config, weights});
    for (const char* name : {k_config, weights, other}) hf::check_replaceable(display, name);
    std::error_code ec;
    if (fs::exists(fs::symlink_status(fs::path(display) / other, ec))) retire_in_folder(m_dir, other);
    check_free_space(display, least_output_bytes(spec.tensors) + config_template().size());
    m_sub.tensors = spec.tensors;
    m_sub.provenance = spec.provenance;
    const std::string path = (fs::path(m_dir) / weights).string();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) fail(m_display, std::string("cannot create ") + weights + ": " + std::strerror(errno));
    ::close(fd);
    const std::string shown = (fs::path(m_display) / weights).string();
    if (file == WeightsFile::bin) {
      m_weights = pytorch::create_pytorch_writer(path, shown, m_sub);  // a plain state_dict, as peft's torch.save
      return;
    }
    if (m_template) m_sub.metadata = m_template->metadata();
    m_sub.metadata.emplace("format", "pt");  // transformers refuses safetensors weights without it
    m_weights = create_safetensors_writer(path, shown, m_sub);
  }

  bool holds_template_values(std::size_t) const override { return false; }

  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    m_weights->write(index, offset, count, src);
  }

  void finish() override {
    m_weights->finish();
    write_new_file(m_dir, k_config, config(), m_display);
  }

 private:
  // An adapter_config.json among the spec's extra files (merge --lora-extract's), or null.
  const std::string* given_config() const {
    for (const auto& [name, text] : m_spec.extra_files)
      if (name == k_config) return &text;
    return nullptr;
  }

  // The config the output's starts from: input 1's, or the one the spec brings.
  const std::string& config_template() const { return m_template ? m_template->config_text() : *given_config(); }

  // Input 1's config, byte for byte when every module keeps its rank; otherwise with "r" set to the first
  // module's rank and rank_pattern naming each module whose rank differs from that. A config the spec brings is
  // written as it is.
  std::string config() const {
    if (!m_template) return *given_config();
    std::map<std::string, std::uint64_t> old_rank;
    for (const LoraModule& m : m_template->lora_adapter()->modules) old_rank[m.name] = m.rank;
    std::vector<std::pair<std::string, std::uint64_t>> ranks;
    bool changed = false;
    for (const TensorInfo& t : m_spec.tensors) {
      if (t.role != Role::lora_a || t.shape.empty()) continue;
      const std::size_t cut = t.name.ends_with(".lora_A.weight") ? 14 : t.name.ends_with(".lora_embedding_A") ? 17 : 0;
      const std::string module = t.name.substr(0, t.name.size() - cut);
      ranks.emplace_back(module, t.shape[0]);
      const auto it = old_rank.find(module);
      changed = changed || it == old_rank.end() || it->second != t.shape[0];
    }
    if (!changed) return m_template->config_text();
    auto doc = nlohmann::ordered_json::parse(m_template->config_text());
    const std::uint64_t r = ranks.front().second;
    doc["r"] = r;
    nlohmann::ordered_json pattern = nlohmann::ordered_json::object();
    for (const auto& [module, rank] : ranks)
      if (rank != r) pattern[pattern_target(module)] = rank;
    doc["rank_pattern"] = pattern;
    return doc.dump(2) + "\n";
  }

  std::string m_dir;
  std::string m_display;
  const OutputSpec& m_spec;
  const AdapterReader* m_template = nullptr;
  OutputSpec m_sub;  // the weights file's spec: the output's tensors, "format": "pt" in its metadata
  std::unique_ptr<Writer> m_weights;
};

}  // namespace

std::unique_ptr<Writer> create_peft_writer(const std::string& tmp_dir, const std::string& display_path,
                                           const OutputSpec& spec) {
  return std::make_unique<AdapterWriter>(WeightsFile::safetensors, tmp_dir, display_path, spec);
}

std::unique_ptr<Writer> create_peft_bin_writer(const std::string& tmp_dir, const std::string& display_path,
                                               const OutputSpec& spec) {
  return std::make_unique<AdapterWriter>(WeightsFile::bin, tmp_dir, display_path, spec);
}

}  // namespace wavg::peft
