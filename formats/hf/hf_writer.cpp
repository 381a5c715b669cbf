// Writing Hugging Face model folders: one writer of the shards' format per shard, each over its part of the output
// spec, into the AtomicDirectory's temporary directory; the index and input 1's other files beside them. The folder
// appears whole when the directory is renamed into place (layout in hf.hpp).

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "hf/hf.hpp"
#include "pytorch/pytorch.hpp"
#include "safetensors/safetensors.hpp"
#include "wavg/error.hpp"
#include "wavg/file_io.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg::hf {

namespace {

namespace fs = std::filesystem;

enum class ShardFormat { safetensors, bin };

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

std::string shard_name(ShardFormat f, std::size_t i, std::size_t n) {
  const char* stem = f == ShardFormat::safetensors ? "model" : "pytorch_model";
  const char* ext = f == ShardFormat::safetensors ? ".safetensors" : ".bin";
  if (n == 1) return std::string(stem) + ext;
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s-%05zu-of-%05zu%s", stem, i + 1, n, ext);
  return buf;
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
    // --force replaces the whole folder: only a model folder (or an empty one), never a folder the path happens
    // to name (a home directory).
    std::error_code ec;
    if (fs::is_directory(fs::symlink_status(display, ec)) && !fs::is_empty(display, ec) && !looks_like_hf(display))
      throw Error(ExitCode::usage, display,
                  "is a folder that holds no Hugging Face model; wavg replaces only a model folder");
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
    for (std::size_t s = 0; s < shards.size(); ++s) {
      m_names.push_back(shard_name(format, s, shards.size()));
      auto sub = std::make_unique<OutputSpec>();
      for (std::size_t k = 0; k < shards[s].size(); ++k) {
        m_where[shards[s][k]] = {s, k};
        sub->tensors.push_back(spec.tensors[shards[s][k]]);
      }
      if (format == ShardFormat::safetensors) sub->metadata = shard_metadata(spec.template_input);
      sub->provenance = spec.provenance;
      const std::string path = (fs::path(m_dir) / m_names.back()).string();
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd < 0) fail(m_display, "cannot create " + m_names.back() + ": " + std::strerror(errno));
      ::close(fd);
      const std::string shown = (fs::path(m_display) / m_names.back()).string();
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
                                 ? "model.safetensors.index.json"
                                 : "pytorch_model.bin.index.json";
    const std::string path = (fs::path(m_dir) / name).string();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) fail(m_display, "cannot create " + name + ": " + std::strerror(errno));
    try {
      pwrite_all(fd, text.data(), text.size(), 0, m_display);
    } catch (...) {
      ::close(fd);
      throw;
    }
    if (::close(fd) != 0) fail(m_display, "cannot close " + name);
  }

  // config.json, tokenizer files and the like from input 1's folder: every plain file that holds no weights.
  void copy_other_files() const {
    const auto* folder = dynamic_cast<const FolderReader*>(m_spec.template_input);
    if (!folder) return;
    std::error_code ec, ignored;
    for (const auto& e : fs::directory_iterator(folder->folder(), ec)) {
      const std::string name = e.path().filename().string();
      if (name.empty() || name[0] == '.' || FolderReader::is_weights_file(name) || e.is_symlink(ignored) ||
          !e.is_regular_file(ignored))
        continue;
      const std::string to = (fs::path(m_dir) / name).string();
      if (fs::exists(fs::symlink_status(to, ignored))) continue;  // one of the output's own files
      copy_file(e.path().string(), to, m_display);
    }
    if (ec) fail(folder->folder(), "cannot list the folder: " + ec.message());
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
