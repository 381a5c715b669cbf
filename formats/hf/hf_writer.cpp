// Writing Hugging Face model folders: one writer of the shards' format per shard, each over its part of the output
// spec, into the AtomicDirectory's temporary directory; the index and input 1's other files beside them. The folder
// appears whole when the directory is renamed into place (layout in hf.hpp). The shards are laid out from the spec
// alone, so the ranks of a distributed merge each write their values into the same shards in place.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>

#include "hf/hf.hpp"
#include "pytorch/pytorch.hpp"
#include "safetensors/safetensors.hpp"
#include "small_text.hpp"
#include "wavg/atomic_directory.hpp"
#include "wavg/error.hpp"
#include "wavg/file_io.hpp"
#include "wavg/free_space.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg::hf {

namespace {

namespace fs = std::filesystem;

enum class ShardFormat { safetensors, bin };

// The largest plain file copied from input 1's folder: tokenizers and configs are a few MiB, a tokenizer.model or
// vocabulary tens; weights are never copied.
constexpr std::uint64_t k_max_copied = 1ull << 30;
constexpr const char* k_config = "config.json";

// What each safetensors shard's __metadata__ starts from: transformers refuses a safetensors file whose metadata
// lacks "format" (modeling_utils: "pt", "tf", "flax" or "mlx"). Input 1's shard metadata, when it has some, is
// kept; the provenance is laid over it by the safetensors writer.
std::map<std::string, std::string> shard_metadata(const Reader* input1) {
  std::map<std::string, std::string> metadata;
  if (const auto* folder = dynamic_cast<const FolderReader*>(input1))
    if (folder->first_shard().format() == FormatId::safetensors) metadata = folder->first_shard().metadata();
  if (input1 && input1->format() == FormatId::safetensors) metadata = input1->metadata();
  metadata.emplace("format", "pt");
  return metadata;
}

// The ecosystem's name for shard i of n, with "-TOKEN" before the extension when `token` is not empty.
std::string shard_name(ShardFormat f, std::size_t i, std::size_t n, const std::string& token) {
  const char* stem = f == ShardFormat::safetensors ? "model" : "pytorch_model";
  const char* ext = f == ShardFormat::safetensors ? ".safetensors" : ".bin";
  if (n == 1) return std::string(stem) + ext;
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s-%05zu-of-%05zu%s%s%s", stem, i + 1, n, token.empty() ? "" : "-", token.c_str(),
                ext);
  return buf;
}

const char* index_name(ShardFormat f) {
  return f == ShardFormat::safetensors ? "model.safetensors.index.json" : "pytorch_model.bin.index.json";
}

// Chooses the shards' names: the ecosystem's, or, when an existing output folder holds one of them (an old model's
// shard that a reader must keep finding until the switch), each with the run's token.
std::vector<std::string> shard_names(ShardFormat f, std::size_t n, const std::string& folder,
                                     const std::string& tmp_dir) {
  std::vector<std::string> names;
  bool taken = false;
  std::error_code ec;
  for (std::size_t s = 0; s < n; ++s) {
    names.push_back(shard_name(f, s, n, ""));
    taken = taken || (n > 1 && fs::exists(fs::symlink_status(fs::path(folder) / names.back(), ec)));
  }
  if (taken)
    for (std::size_t s = 0; s < n; ++s) names[s] = shard_name(f, s, n, run_token(tmp_dir));
  return names;
}

// The dtype most of the output's float values are written in, or nothing when it holds no float tensor.
std::optional<DType> written_dtype(const std::vector<TensorInfo>& tensors) {
  std::map<DType, std::uint64_t> values;
  for (const TensorInfo& t : tensors)
    if (is_float(t.dtype)) values[t.dtype] += t.count();
  std::optional<DType> most;
  for (const auto& [dtype, n] : values)
    if (!most || n > values[*most]) most = dtype;
  return most;
}

// `config` (a config.json) with the dtype it declares (transformers' torch_dtype, or dtype from 4.56 on: whichever
// it holds) set to the one written, so that from_pretrained(dtype="auto") loads the model as it is stored, as
// mergekit's config says its dtype; unchanged, byte for byte, when it already says so, declares none or is no JSON
// object.
std::string with_written_dtype(const std::string& config, const std::vector<TensorInfo>& tensors) {
  const std::optional<DType> dtype = written_dtype(tensors);
  if (!dtype) return config;
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(config, nullptr, false);
  if (!json.is_object()) return config;
  const std::string name(dtype_name(*dtype));
  bool changed = false;
  for (const char* key : {"torch_dtype", "dtype"})
    if (json.contains(key) && json[key].is_string() && json[key] != name) {
      json[key] = name;
      changed = true;
    }
  return changed ? json.dump(2) + "\n" : config;
}

// Copies `from` (a regular file, not a link) to `to`, a new file.
void copy_file(const std::string& from, const std::string& to, const std::string& display) {
  std::string why;
  const int in = try_open_regular_file(from, FollowLinks::no, why);
  if (in < 0) fail(from, why);
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (out < 0) {
    why = std::strerror(errno);
    ::close(in);
    fail(display, "cannot create " + fs::path(to).filename().string() + ": " + why);
  }
  char buf[1 << 16];
  std::uint64_t at = 0;
  for (;;) {
    const ssize_t n = ::read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why = std::strerror(errno);
      ::close(in);
      ::close(out);
      fail(from, "cannot read: " + why);
    }
    if (n == 0) break;
    try {
      pwrite_all(out, buf, static_cast<std::uint64_t>(n), at, display);
    } catch (...) {
      ::close(in);
      ::close(out);
      throw;
    }
    at += static_cast<std::uint64_t>(n);
  }
  ::close(in);
  if (::close(out) != 0) fail(display, "cannot close " + fs::path(to).filename().string());
}

class FolderWriter final : public Writer {
 public:
  FolderWriter(ShardFormat format, const std::string& tmp_dir, const std::string& display, const OutputSpec& spec)
      : m_dir(tmp_dir), m_display(display), m_spec(spec) {
    // --force replaces the model in a model folder (or fills an empty one), never a folder the path happens to
    // name (a home directory), and nothing of the folder but the model. A distributed merge's other ranks
    // (OutputSpec::part) lay out the same shards from the spec and only write their values: rank 0 checked the
    // folder and made the files.
    if (!spec.part) check_target_folder(display);
    const std::uint64_t limit = spec.shard_size ? spec.shard_size : k_default_shard_size;
    // huggingface_hub's rule: a tensor starts a new shard when it would overfill the current one.
    std::vector<std::vector<std::size_t>> shards;
    std::uint64_t filled = 0;
    for (std::size_t i = 0; i < spec.tensors.size(); ++i) {
      const std::uint64_t b = spec.tensors[i].bytes();
      if (shards.empty() || (filled > 0 && filled + b > limit)) {
        shards.emplace_back();
        filled = 0;
      }
      shards.back().push_back(i);
      filled += b;
    }
    if (shards.empty()) shards.emplace_back();  // a model of no tensors is still one (empty) file
    m_where.resize(spec.tensors.size());
    m_names = shard_names(format, shards.size(), display, tmp_dir);
    if (!spec.part) plan_replacement(format);
    for (std::size_t s = 0; s < shards.size(); ++s) {
      auto sub = std::make_unique<OutputSpec>();
      for (std::size_t k = 0; k < shards[s].size(); ++k) {
        m_where[shards[s][k]] = {s, k};
        sub->tensors.push_back(spec.tensors[shards[s][k]]);
      }
      if (format == ShardFormat::safetensors) sub->metadata = shard_metadata(spec.template_input);
      sub->provenance = spec.provenance;
      sub->part = spec.part;
      const std::string path = (fs::path(m_dir) / m_names[s]).string();
      if (!spec.part) {
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0) fail(m_display, "cannot create " + m_names[s] + ": " + std::strerror(errno));
        ::close(fd);
      }
      const std::string shown = (fs::path(m_display) / m_names[s]).string();
      m_writers.push_back(format == ShardFormat::safetensors ? create_safetensors_writer(path, shown, *sub)
                                                             : pytorch::create_pytorch_writer(path, shown, *sub));
      m_specs.push_back(std::move(sub));
    }
  }

  bool holds_template_values(std::size_t) const override { return false; }

  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    const auto [s, i] = m_where[index];
    m_writers[s]->write(i, offset, count, src);
  }

  void finish() override {
    for (auto& w : m_writers) w->finish();
    m_writers.clear();
    if (m_names.size() > 1) write_index();
    copy_other_files();
  }

  // Every shard's share of this rank is synced; rank 0's finish() writes the shards' headers and the rest.
  std::string finish_part() override {
    nlohmann::json parts = nlohmann::json::array();
    for (auto& w : m_writers) parts.push_back(w->finish_part());
    m_writers.clear();
    return parts.dump();
  }

  // Hands each shard's writer its part of another rank's finish_part().
  void join_part(const std::string& part) override {
    const auto parts = nlohmann::json::parse(part).get<std::vector<std::string>>();
    WAVG_ASSERT(parts.size() == m_writers.size());
    for (std::size_t s = 0; s < parts.size(); ++s) m_writers[s]->join_part(parts[s]);
  }

 private:
  // The index as save_pretrained writes it (two-space indent, weight_map sorted), the provenance in its metadata.
  void write_index() const {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    std::uint64_t total = 0;
    for (const TensorInfo& t : m_spec.tensors) total += t.bytes();
    meta["total_size"] = total;
    for (const auto& [k, v] : m_spec.provenance.entries()) meta[k] = v;
    std::map<std::string, std::string> map;
    for (std::size_t i = 0; i < m_spec.tensors.size(); ++i) map[m_spec.tensors[i].name] = m_names[m_where[i].first];
    nlohmann::ordered_json doc = {{"metadata", meta}, {"weight_map", map}};
    std::string text;
    try {
      text = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::strict) + "\n";
    } catch (const nlohmann::json::exception&) {
      fail(m_display, "a tensor name is not valid UTF-8; the index cannot hold it");
    }
    const std::string name = m_names.front().find(".safetensors") != std::string::npos
                                 ? index_name(ShardFormat::safetensors)
                                 : index_name(ShardFormat::bin);
    write_text(name, text);
  }

  void write_text(const std::string& name, const std::string& text) const {
    write_new_file(m_dir, name, text, m_display);
  }

  // Tells the AtomicDirectory how to fill an existing folder: the index (or the single file) switches a reader
  // to the new model, and the old model's weights go after; a name of ours the folder holds as anything but a file
  // is refused now, before the merge.
  void plan_replacement(ShardFormat format) {
    const std::string main_file = m_names.size() > 1 ? index_name(format) : m_names.front();
    set_switch_files(m_dir, {main_file});
    check_replaceable(m_display, main_file);
    for (const std::string& name : m_names) check_replaceable(m_display, name);
    for (const std::string& name : files_to_copy()) check_replaceable(m_display, name);
    for (const auto& extra : m_spec.extra_files) check_replaceable(m_display, extra.first);
    for (const std::string& old : old_model_files(m_display)) retire_in_folder(m_dir, old);
    check_copies();
  }

  // Refuses a copied file over k_max_copied (a sparse file of a terabyte would be copied densely) and an output
  // the file system has no room for, counting the copied files with the tensors.
  void check_copies() const {
    const FolderReader* folder = source_folder();
    std::uint64_t bytes = least_output_bytes(m_spec.tensors);
    for (const std::string& name : files_to_copy()) {
      const std::string from = (fs::path(folder->folder()) / name).string();
      struct stat st {};
      if (::lstat(from.c_str(), &st) != 0) continue;  // gone: copy_file says so
      const auto size = static_cast<std::uint64_t>(st.st_size);
      if (size > k_max_copied)
        fail(from, "a plain file of " + std::to_string(size) + " bytes; wavg copies input 1's other files up to " +
                       std::to_string(k_max_copied >> 20) + " MiB each (move it out of the folder)");
      bytes += size;
    }
    for (const auto& extra : m_spec.extra_files) bytes += extra.second.size();
    check_free_space(m_display, bytes);
  }

  // The folder whose other files the output copies: the spec's companions' (a --base merge's base), else input 1's.
  const FolderReader* source_folder() const {
    const auto* folder = dynamic_cast<const FolderReader*>(m_spec.companions);
    return folder ? folder : dynamic_cast<const FolderReader*>(m_spec.template_input);
  }

  // config.json, tokenizer files and the like from source_folder(): every plain file that holds no weights.
  std::vector<std::string> files_to_copy() const {
    std::vector<std::string> out;
    const FolderReader* folder = source_folder();
    if (!folder) return out;
    std::error_code ec, ignored;
    for (const auto& e : fs::directory_iterator(folder->folder(), ec)) {
      const std::string name = e.path().filename().string();
      if (name.empty() || name[0] == '.' || FolderReader::is_weights_file(name) || e.is_symlink(ignored) ||
          !e.is_regular_file(ignored))
        continue;
      out.push_back(name);
    }
    if (ec) fail(folder->folder(), "cannot list the folder: " + ec.message());
    return out;
  }

  // Writes the spec's extra files (a recipe's mergekit_config.yml), then copies source_folder()'s other files;
  // config.json says the dtype written (with_written_dtype).
  void copy_other_files() const {
    for (const auto& [name, text] : m_spec.extra_files)
      write_text(name, name == k_config ? with_written_dtype(text, m_spec.tensors) : text);
    const FolderReader* folder = source_folder();
    std::error_code ignored;
    for (const std::string& name : files_to_copy()) {
      const std::string to = (fs::path(m_dir) / name).string();
      const std::string from = (fs::path(folder->folder()) / name).string();
      if (fs::exists(fs::symlink_status(to, ignored))) continue;  // one of the output's own files
      if (name == k_config) {
        const std::string config = read_small_text(from, k_max_copied, "config");
        if (std::string fixed = with_written_dtype(config, m_spec.tensors); fixed != config) {
          write_text(name, fixed);
          continue;
        }
      }
      copy_file(from, to, m_display);
    }
  }

  std::string m_dir;
  std::string m_display;
  const OutputSpec& m_spec;
  std::vector<std::string> m_names;
  std::vector<std::unique_ptr<OutputSpec>> m_specs;  // before the writers, which refer to them
  std::vector<std::unique_ptr<Writer>> m_writers;
  std::vector<std::pair<std::size_t, std::size_t>> m_where;  // per output tensor: shard, index in the shard
};

}  // namespace

std::unique_ptr<Writer> create_hf_writer(const std::string& tmp_dir, const std::string& display_path,
                                         const OutputSpec& spec) {
  return std::make_unique<FolderWriter>(ShardFormat::safetensors, tmp_dir, display_path, spec);
}

std::unique_ptr<Writer> create_hf_bin_writer(const std::string& tmp_dir, const std::string& display_path,
                                             const OutputSpec& spec) {
  return std::make_unique<FolderWriter>(ShardFormat::bin, tmp_dir, display_path, spec);
}

}  // namespace wavg::hf
