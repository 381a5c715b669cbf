// Writing a DeepSpeed checkpoint folder in input 1's layout: its files copied less the tensors' values, every tensor
// written where the reader found it and into its mirrors, each touched storage's CRC-32 computed from the bytes
// written (layout in deepspeed.hpp).

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "deepspeed/deepspeed.hpp"
#include "deepspeed/deepspeed_files.hpp"
#include "pytorch/copied_files.hpp"
#include "wavg/atomic_directory.hpp"
#include "wavg/error.hpp"
#include "wavg/removal.hpp"

namespace wavg::deepspeed {

namespace {

namespace fs = std::filesystem;

// Whether `folder` holds a DeepSpeed checkpoint's model states (a regular file; the one a loader opens first).
bool holds_model_states(const std::string& folder) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec))
    if (e.path().filename().string().ends_with("_model_states.pt") && fs::is_regular_file(e.symlink_status(ec)))
      return true;
  return false;
}

class DeepspeedWriter final : public Writer {
 public:
  DeepspeedWriter(const std::string& tmp_dir, const std::string& display, const OutputSpec& spec)
      : m_dir(tmp_dir), m_display(display), m_spec(spec), m_out(tmp_dir, display) {
    check_model_folder(
        display, [&] { return holds_model_states(display); }, "DeepSpeed checkpoint (*_model_states.pt)");
    m_input = dynamic_cast<const DeepspeedReader*>(spec.template_input);
    if (!m_input)
      fail_usage(display +
                 ": a DeepSpeed folder output keeps input 1's layout, so input 1 must be a DeepSpeed "
                 "checkpoint");
    m_source = pytorch::source_indices(*m_input, spec.tensors, display, "a DeepSpeed folder output");
    refuse_left_out();
    for (std::size_t i = 0; i < m_source.size(); ++i) {
      // A shared_params alias reads its target's fp32 master values: two means cannot both live there.
      const TensorInfo& in = m_input->tensors()[m_source[i]];
      if (!in.alias_of.empty() && spec.tensors[i].alias_of != in.alias_of)
        throw Error(ExitCode::incompatible, display,
                    in.name + " and " + in.alias_of + " are one parameter (shared_params) in " + m_input->path() +
                        " but not in every input, so each needs its own mean; a DeepSpeed folder output keeps "
                        "input 1's parameters: write .safetensors, which holds them apart");
    }
    std::vector<std::string> models;
    const std::vector<pytorch::CopySpec> specs = describe();
    for (std::size_t f = 0; f < m_input->files().size(); ++f) {
      const std::string name = fs::path(m_input->files()[f]).filename().string();
      m_out.copy(name, m_input->file(f), specs[f]);  // copy f is file f
      if (ends_with(name, "_model_states.pt")) models.push_back(name);
    }
    // An existing folder (--force): the model states files, which a loader opens first, are placed last, and the
    // old checkpoint's rank files that the new one lacks go; other files stay.
    set_switch_files(m_dir, models);
    // removal.hpp's rule; AtomicDirectory replaces an existing folder only with --force.
    const OwnFiles own{display,
                       "DeepSpeed rank file",
                       [](const std::string& name) {
                         return ends_with(name, "_optim_states.pt") || ends_with(name, "_model_states.pt");
                       },
                       {}};
    std::error_code ec;
    if (fs::is_directory(fs::symlink_status(display, ec)))
      for (const std::string& name : removable_files(own, files_named_like(own), Overwrite::yes))
        retire_in_folder(m_dir, name);
  }

  bool holds_template_values(std::size_t) const override { return false; }

  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    const std::size_t in = m_source[index];
    const DType dtype = m_input->tensors()[in].dtype;
    const std::size_t elem = dtype_size(dtype);
    const auto* bytes = static_cast<const unsigned char*>(src);
    // A kept alias gets its target's result, which its target writes to their shared places; the alias writes only
    // its own module copies (none where the module ties the pair in one storage).
    const bool alias = !m_input->tensors()[in].alias_of.empty();
    std::uint64_t skip = offset, left = alias ? 0 : count;
    for (const DeepspeedReader::Piece& p : m_input->pieces(in)) {
      if (left == 0) break;
      if (skip >= p.count) {
        skip -= p.count;
        continue;
      }
      const std::uint64_t n = std::min(left, p.count - skip);
      m_out.write(p.file, bytes, n * elem, p.at + skip * elem);
      bytes += n * elem;
      left -= n;
      skip = 0;
    }
    for (const DeepspeedReader::Mirror& m : m_input->mirrors(in)) {
      const void* data = src;
      if (m.dtype != dtype) data = narrowed(src, count, m.dtype);
      m_out.write(m.file, data, count * dtype_size(m.dtype), m.at + offset * dtype_size(m.dtype));
    }
  }

  void finish() override { m_out.finish(m_spec.provenance); }

 private:
  // Returns, per file, the bytes write() puts there (every element of every tensor, each once: every tensor of input
  // 1 is written, holds_template_values() is false) and the storages holding them, whose CRC-32s change.
  std::vector<pytorch::CopySpec> describe() const {
    std::vector<pytorch::CopySpec> specs(m_input->files().size());
    for (std::size_t f = 0; f < specs.size(); ++f)
      for (const pytorch::ZipEntry& e : m_input->storages(f)) specs[f].entries.push_back({0, 0, e});
    for (const std::size_t in : m_source) {
      const TensorInfo& t = m_input->tensors()[in];
      std::uint64_t left = t.alias_of.empty() ? t.count() : 0;  // as write() does
      for (const DeepspeedReader::Piece& p : m_input->pieces(in)) {
        const std::uint64_t n = std::min(left, p.count);
        specs[p.file].written.emplace_back(p.at, n * dtype_size(t.dtype));
        left -= n;
      }
      for (const DeepspeedReader::Mirror& m : m_input->mirrors(in))
        specs[m.file].written.emplace_back(m.at, t.count() * dtype_size(m.dtype));
    }
    return specs;
  }

  // A tensor of input 1 the output leaves out (--exclude, --include, --optimizer-state drop, --tensors
  // intersection) cannot leave these files: ZeRO keeps a group's parameters and their moments as flat partitions
  // cut across the ranks, which engine.load_checkpoint takes only whole for the same model, and the files' pickles
  // hold DeepSpeed's objects (its config, ZeroStageEnum, the loss scaler) that wavg reads as data, never re-pickles.
  void refuse_left_out() const {
    std::vector<bool> written(m_input->tensors().size(), false);
    for (const std::size_t s : m_source) written[s] = true;
    for (std::size_t i = 0; i < written.size(); ++i)
      if (!written[i])
        throw Error(ExitCode::usage, m_display,
                    m_input->tensors()[i].name +
                        " is left out of the output, but a DeepSpeed folder output holds every tensor of input 1 "
                        "(ZeRO's flat partitions hold every parameter; --optimizer-state first keeps input 1's "
                        "moments; to leave tensors out write .safetensors)");
  }

  // The module's bf16 or fp16 copy of fp32 values, rounded to nearest even. `src` may be an input's view at any
  // byte address (a tensor copied from an input), so each float is loaded with memcpy.
  const void* narrowed(const void* src, std::uint64_t count, DType to) {
    WAVG_ASSERT(m_input && (to == DType::bf16 || to == DType::f16));
    m_narrow.resize(count);
    for (std::uint64_t i = 0; i < count; ++i) {
      float v;
      std::memcpy(&v, static_cast<const unsigned char*>(src) + i * sizeof v, sizeof v);
      m_narrow[i] = to == DType::bf16 ? double_to_bf16(v) : double_to_half(v);
    }
    return m_narrow.data();
  }
  std::string m_dir, m_display;
  const OutputSpec& m_spec;
  const DeepspeedReader* m_input = nullptr;
  std::vector<std::size_t> m_source;  // per output tensor, its index in input 1
  pytorch::CopiedFiles m_out;         // copy f is input 1's file f
  std::vector<std::uint16_t> m_narrow;
};

}  // namespace

std::unique_ptr<Writer> create_deepspeed_writer(const std::string& tmp_dir, const std::string& display_path,
                                                const OutputSpec& spec) {
  return std::make_unique<DeepspeedWriter>(tmp_dir, display_path, spec);
}

}  // namespace wavg::deepspeed
