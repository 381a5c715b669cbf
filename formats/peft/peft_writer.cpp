// Writing PEFT adapter folders: adapter_model.safetensors through the safetensors writer, and input 1's
// adapter_config.json beside it, its ranks rewritten where the output's factors have others (layout in peft.hpp).

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "hf/hf.hpp"
#include "peft/peft.hpp"
#include "safetensors/safetensors.hpp"
#include "wavg/atomic_directory.hpp"
#include "wavg/error.hpp"
#include "wavg/file_io.hpp"
#include "wavg/free_space.hpp"

namespace wavg::peft {

namespace {

namespace fs = std::filesystem;

constexpr const char* k_weights = "adapter_model.safetensors";
constexpr const char* k_config = "adapter_config.json";

// `name` as a regular expression matching exactly it: rank_pattern's keys are expressions.
std::string escaped(const std::string& name) {
  std::string out;
  for (const char c : name) {
    if (std::strchr(R"(\^$.|?*+()[]{})", c)) out += '\\';
    out += c;
  }
  return out;
}

class AdapterWriter final : public Writer {
 public:
  AdapterWriter(const std::string& tmp_dir, const std::string& display, const OutputSpec& spec)
      : m_dir(tmp_dir), m_display(display), m_spec(spec) {
    m_template = dynamic_cast<const AdapterReader*>(spec.template_input);
    if (!m_template)
      throw Error(ExitCode::usage, display,
                  "an adapter folder takes its adapter_config.json from input 1, which is no PEFT adapter");
    // --force replaces the adapter in an adapter folder (or fills an empty one), nothing else of the folder.
    check_model_folder(
        display, [&] { return looks_like_peft(display); }, "PEFT adapter");
    set_switch_files(m_dir, {k_config, k_weights});
    for (const char* name : {k_config, k_weights, "adapter_model.bin"}) hf::check_replaceable(display, name);
    std::error_code ec;
    if (fs::exists(fs::symlink_status(fs::path(display) / "adapter_model.bin", ec)))
      retire_in_folder(m_dir, "adapter_model.bin");
    check_free_space(display, least_output_bytes(spec.tensors) + m_template->config_text().size());
    m_sub.tensors = spec.tensors;
    m_sub.provenance = spec.provenance;
    m_sub.metadata = m_template->metadata();
    m_sub.metadata.emplace("format", "pt");  // transformers refuses safetensors weights without it
    const std::string path = (fs::path(m_dir) / k_weights).string();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) fail(m_display, std::string("cannot create ") + k_weights + ": " + std::strerror(errno));
    ::close(fd);
    m_weights = create_safetensors_writer(path, (fs::path(m_display) / k_weights).string(), m_sub);
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
  // Input 1's config, byte for byte when every module keeps its rank; otherwise with "r" set to the first
  // module's rank and rank_pattern naming each module whose rank differs from that.
  std::string config() const {
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
      if (rank != r) pattern[escaped(pattern_target(module))] = rank;
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
  return std::make_unique<AdapterWriter>(tmp_dir, display_path, spec);
}

}  // namespace wavg::peft
