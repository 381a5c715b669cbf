// Writing TF.js models: model.json into the AtomicFile's temporary file, the shards into companions of it, so the
// new model appears whole in model.json's rename, and an old model it replaces stays whole until then (layout in
// tfjs.hpp).

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "tfjs/tfjs.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/error.hpp"
#include "wavg/removal.hpp"

namespace wavg {

namespace {

// The TF.js converter's default shard size (write_weights.py), the largest file browsers cache.
constexpr std::uint64_t k_shard_bytes = 4ull << 20;

using OrderedJson = nlohmann::ordered_json;

std::string tfjs_dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "float32";
    case DType::i32: return "int32";
    case DType::boolean: return "bool";
    default: return {};
  }
}

// Returns STEM-shard1ofN.bin ... STEM-shardNofN.bin, the converter's names.
std::vector<std::string> shard_names(const std::string& stem, std::uint64_t n) {
  std::vector<std::string> names;
  for (std::uint64_t i = 0; i < n; ++i)
    names.push_back(stem + "-shard" + std::to_string(i + 1) + "of" + std::to_string(n) + ".bin");
  return names;
}

// Tells whether `name` is named like a shard of the model `stem`: STEM-shardIofN.bin or STEM-TOKEN-shardIofN.bin.
bool is_stem_shard(const std::string& name, const std::string& stem) {
  static const std::regex tail(R"((-[A-Za-z0-9]{6})?-shard[0-9]+of[0-9]+\.bin)");
  return name.size() > stem.size() && name.compare(0, stem.size(), stem) == 0 &&
         std::regex_match(name.begin() + static_cast<std::ptrdiff_t>(stem.size()), name.end(), tail);
}

// The files the new model may remove (removal.hpp): TF.js weight files, named as TF.js names them (the converter's
// NAME-shardIofN.bin, tfjs-node's weights.bin, a browser download's NAME.weights.bin), in its folder and used by
// no other model there. Every *.json of the folder but the target is asked which shards it lists (a model the
// user kept as v1.json still uses model-shard1of1.bin).
OwnFiles own_tfjs_files(const std::string& dir, const std::string& target_name) {
  static const std::regex k_weights_file(R"((.+-shard[0-9]+of[0-9]+|weights|.+\.weights)\.bin)");
  OwnFiles own{dir, "TF.js shard", [](const std::string& name) { return std::regex_match(name, k_weights_file); }, {}};
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir.empty() ? "." : dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name != target_name && name.ends_with(".json"))
      for (const std::string& used : tfjs_listed_shards(e.path().string()))  // "./x.bin" names x.bin too
        own.used_by_others.insert(std::filesystem::path(used).lexically_normal().string());
  }
  return own;
}

class TfjsWriter final : public Writer {
 public:
  TfjsWriter(const std::string& tmp_path, const std::string& display_path, const OutputSpec& spec)
      : m_tmp(tmp_path), m_display(display_path), m_spec(spec) {
    std::uint64_t total = 0;
    for (const TensorInfo& t : spec.tensors) {
      // --out-dtype retypes floats only: an integer tensor has to be left out.
      if (tfjs_dtype_name(t.dtype).empty())
        fail(display_path, "TF.js holds float32, int32 and bool weights; " + t.name + " is " +
                               std::string(dtype_name(t.dtype)) +
                               (is_float(t.dtype) ? " (use --out-dtype float32)"
                                                  : " (leave it out with --exclude '" + t.name + "')"));
      m_start.push_back(total);
      total += t.bytes();
    }
    const std::uint64_t n = (total + k_shard_bytes - 1) / k_shard_bytes;
    const std::size_t slash = display_path.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : display_path.substr(0, slash + 1);
    std::string stem = display_path.substr(dir.size());
    if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0) stem.resize(stem.size() - 5);
    m_names = shard_names(stem, n);
    // Every target is checked before any companion exists, so a refusal leaves nothing behind.
    for (const std::string& name : m_names) check_not_input(tmp_path, dir + name);
    // The shards are new files: the old model's (or a killed run's) keep their names, and model.json switches from
    // those to these in one rename. A name already taken gives way to one unique to this run.
    std::error_code ec;
    for (const std::string& name : m_names)
      if (std::filesystem::exists(std::filesystem::symlink_status(dir + name, ec))) {
        m_names = shard_names(stem + "-" + run_token(tmp_path), n);
        break;
      }
    // The replaced model.json's shards go after the switch, and so do shards of this model's name that no
    // model.json lists any more (an interrupted run's); without --force such a shard is a refusal.
    const OwnFiles own = own_tfjs_files(dir, display_path.substr(dir.size()));
    std::vector<std::string> old = tfjs_listed_shards(display_path);
    for (const std::string& name : files_named_like(own))
      if (is_stem_shard(name, stem)) old.push_back(name);
    for (const std::string& name : removable_files(own, old, overwrite_of(tmp_path)))
      retire_after_commit(tmp_path, dir + name);
    for (std::uint64_t i = 0; i < n; ++i) {
      m_shards.push_back(add_companion(tmp_path, dir + m_names[i]));
      const std::uint64_t size = std::min(k_shard_bytes, total - i * k_shard_bytes);
      const int fd = ::open(m_shards.back().c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
        const std::string why = std::strerror(errno);
        if (fd >= 0) ::close(fd);
        fail(display_path, "cannot size the shard " + m_names[i] + ": " + why);
      }
      ::close(fd);
    }
  }

  ~TfjsWriter() override { close_shard(); }

  bool holds_template_values(std::size_t) const override { return false; }

  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    const std::size_t elem = dtype_size(m_spec.tensors[index].dtype);
    std::uint64_t at = m_start[index] + offset * elem, bytes = count * elem;
    const char* p = static_cast<const char*>(src);
    while (bytes > 0) {
      const std::size_t shard = static_cast<std::size_t>(at / k_shard_bytes);
      const std::uint64_t in_shard = at % k_shard_bytes;
      const std::uint64_t take = std::min(bytes, k_shard_bytes - in_shard);
      pwrite_all(shard, p, take, in_shard);
      p += take;
      at += take;
      bytes -= take;
    }
  }

  void finish() override {
    if (m_fd >= 0 && ::close(m_fd) != 0) {
      m_fd = -1;
      fail(m_display, std::string("cannot close a shard: ") + std::strerror(errno));
    }
    m_fd = -1;
    const std::string text = model_json();
    const int fd = ::open(m_tmp.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) fail(m_display, std::strerror(errno));
    m_fd = fd;
    m_fd_shard = SIZE_MAX;
    write_fd(text.data(), text.size(), 0, m_display);
    close_shard();
  }

 private:
  // Builds model.json: input 1's members in their order, weightsManifest and userDefinedMetadata.wavg replaced.
  std::string model_json() const {
    OrderedJson doc = OrderedJson::object();
    if (const auto* tfjs = dynamic_cast<const TfjsReader*>(m_spec.template_input))
      doc = OrderedJson::parse(tfjs->model_json());
    OrderedJson weights = OrderedJson::array();
    for (const TensorInfo& t : m_spec.tensors)
      weights.push_back({{"name", t.name}, {"shape", t.shape}, {"dtype", tfjs_dtype_name(t.dtype)}});
    doc["weightsManifest"] = OrderedJson::array({{{"paths", m_names}, {"weights", std::move(weights)}}});
    OrderedJson& udm = doc["userDefinedMetadata"];
    if (!udm.is_object()) udm = OrderedJson::object();
    udm["wavg"] = m_spec.provenance.entries();
    try {
      return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
    } catch (const nlohmann::json::exception&) {
      fail(m_display, "a weight name is not valid UTF-8; model.json cannot hold it");
    }
  }

  void pwrite_all(std::size_t shard, const void* data, std::uint64_t bytes, std::uint64_t at) {
    if (m_fd_shard != shard) {
      close_shard();
      m_fd = ::open(m_shards[shard].c_str(), O_WRONLY | O_CLOEXEC);
      if (m_fd < 0) fail(m_display, m_names[shard] + ": " + std::strerror(errno));
      m_fd_shard = shard;
    }
    write_fd(data, bytes, at, m_names[shard]);
  }

  void write_fd(const void* data, std::uint64_t bytes, std::uint64_t at, const std::string& what) {
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
      const ssize_t n = ::pwrite(m_fd, p, bytes, static_cast<off_t>(at));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(m_display, what + ": write failed: " + std::strerror(errno));
      p += n;
      at += static_cast<std::uint64_t>(n);
      bytes -= static_cast<std::uint64_t>(n);
    }
  }

  void close_shard() {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
    m_fd_shard = SIZE_MAX;
  }

  std::string m_tmp;
  std::string m_display;
  const OutputSpec& m_spec;
  std::vector<std::uint64_t> m_start;  // each tensor's first byte in the shards' concatenation
  std::vector<std::string> m_names;    // shard file names, as model.json lists them
  std::vector<std::string> m_shards;   // their temporary files
  int m_fd = -1;
  std::size_t m_fd_shard = SIZE_MAX;
};

}  // namespace

std::unique_ptr<Writer> create_tfjs_writer(const std::string& tmp_path, const std::string& display_path,
                                           const OutputSpec& spec) {
  return std::make_unique<TfjsWriter>(tmp_path, display_path, spec);
}

}  // namespace wavg
