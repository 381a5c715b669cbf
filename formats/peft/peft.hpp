#pragma once
// PEFT adapter folders (peft's save_pretrained of a LoRA or DoRA adapter).
//
// A folder holds:
//
//   adapter_config.json         { "peft_type": "LORA", "r": 8, "lora_alpha": 16, "use_rslora": false,
//                                 "use_dora": false, "rank_pattern": { "PATTERN": R, ... },
//                                 "alpha_pattern": { "PATTERN": ALPHA, ... }, "target_modules": [...] or "REGEX",
//                                 "modules_to_save": [...] or null, "base_model_name_or_path": "...", ... }
//   adapter_model.safetensors   the tensors (safetensors.hpp), looked for first, as peft does
//   adapter_model.bin           or a torch.save state_dict of them (pytorch/pytorch.hpp)
//
// Tensor names are the module's path and a suffix: MODULE.lora_A.weight (r x in), MODULE.lora_B.weight (out x r),
// for an embedding MODULE.lora_embedding_A (r x vocabulary) and MODULE.lora_embedding_B (dim x r), with DoRA
// MODULE.lora_magnitude_vector (out; read with ".weight" after it too), and the whole modules of
// modules_to_save under their own names. A PATTERN of rank_pattern or alpha_pattern applies to the modules whose
// name, less the "base_model.model." peft puts before it, it ends (peft's `(.*\.)?(PATTERN)$`); the first in the
// config's order wins. The reader checks the config (at most 16 MiB, a JSON object, r and lora_alpha positive
// numbers, peft_type LORA when given) and that every module has both factors, with A's rows and B's columns equal
// to the module's rank and a magnitude only with use_dora.
//
// The writer makes a folder (an AtomicDirectory's temporary directory) of adapter_model.safetensors (with
// "format": "pt" and the provenance in __metadata__), or with --format peft-bin adapter_model.bin (a torch.save
// state_dict, the provenance in its wavg.json entry, pytorch.hpp), and adapter_config.json: input 1's, with "r" and
// "rank_pattern" rewritten to the ranks the output's factors have, or, when input 1 is no adapter, the
// adapter_config.json among the spec's extra files (merge --lora-extract's). An existing output folder (--force)
// must hold an adapter; its adapter_config.json and adapter_model.* are replaced (the other weights file removed,
// since peft would load adapter_model.safetensors first), the rest stays.

#include <memory>
#include <string>

#include "listed_reader.hpp"
#include "wavg/format.hpp"
#include "wavg/lora.hpp"

namespace wavg::peft {

class AdapterReader final : public ListedReader {
 public:
  // Opens an adapter folder. Throws Error (exit 1) naming the file at fault.
  explicit AdapterReader(const std::string& path);

  // Returns adapter_config.json, then the weights file.
  std::vector<std::string> files() const override;
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override;
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void release(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  const LoraAdapter* lora_adapter() const override { return &m_adapter; }

  // Returns adapter_config.json's text, which an output's config starts from.
  const std::string& config_text() const { return m_config_text; }

 private:
  void read_config();
  void find_modules();

  std::string m_folder;
  std::string m_config_text;
  std::unique_ptr<Reader> m_weights;
  LoraAdapter m_adapter;
};

// Tells whether an input is a folder holding adapter_config.json and adapter_model.safetensors or .bin.
bool looks_like_peft(const SniffInput& input);

// Returns the module name's part that rank_pattern and alpha_pattern are matched against (without peft's
// "base_model.model.").
std::string pattern_target(const std::string& module);

std::unique_ptr<Writer> create_peft_writer(const std::string& tmp_dir, const std::string& display_path,
                                           const OutputSpec& spec);
// The same folder with adapter_model.bin, a torch.save state_dict (--format peft-bin).
std::unique_ptr<Writer> create_peft_bin_writer(const std::string& tmp_dir, const std::string& display_path,
                                               const OutputSpec& spec);

}  // namespace wavg::peft
