// Writing TensorFlow checkpoints: tensors into the data shard (a companion of the AtomicFile) as the engine hands
// them over, each one's crc32c kept up as its blocks arrive; then input 1's string tensors and wavg's provenance;
// last the .index table into the AtomicFile's own temporary file (layout in tensorflow.hpp).

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "formats/tensorflow/tensor_bundle.pb.h"
#include "tensorflow/crc32c.hpp"
#include "tensorflow/tensorflow.hpp"
#include "tensorflow/tf_dtype.hpp"
#include "tensorflow/tf_table.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/error.hpp"
#include "wavg/file_io.hpp"
#include "wavg/removal.hpp"

namespace wavg {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// One entry of the output: where its bytes go and what they hash to.
struct Slot {
  std::string name;
  int datatype = 0;
  Shape shape;
  std::uint64_t offset = 0, size = 0;
  std::uint32_t crc = 0;
  std::uint64_t hashed = 0;  // bytes folded into crc so far, in order
  bool in_order = true;      // false once a block arrived out of order: crc is recomputed from the file
};

// Quotes a string for a text-format protobuf (the `checkpoint` state file).
std::string text_proto_quote(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Records the old checkpoint's other data shards (PREFIX.data-NNNNN-of-NNNNN but `kept`) for removal after commit,
// as removal.hpp allows: without --force, such a shard (an older checkpoint's, a copy in progress) is a refusal.
void retire_old_shards(const std::string& tmp_path, const std::string& prefix, const std::string& kept) {
  static const std::regex tail(R"(\.data-[0-9]{5}-of-[0-9]{5})");
  const std::filesystem::path p(prefix);
  const std::string stem = p.filename().string(), kept_name = std::filesystem::path(kept).filename().string();
  const OwnFiles own{p.parent_path().string(),
                     "TensorFlow data shard",
                     [&](const std::string& name) {
                       return name.size() > stem.size() && name.compare(0, stem.size(), stem) == 0 &&
                              std::regex_match(name.begin() + static_cast<std::ptrdiff_t>(stem.size()), name.end(),
                                               tail) &&
                              name != kept_name;
                     },
                     {}};
  for (const std::string& name : removable_files(own, files_named_like(own), overwrite_of(tmp_path)))
    retire_after_commit(tmp_path, (p.parent_path() / name).string());
}

class TensorflowWriter final : public Writer {
 public:
  TensorflowWriter(const std::string& tmp_path, const std::string& display_path, const OutputSpec& spec)
      : m_tmp(tmp_path), m_display(display_path), m_spec(spec) {
    const std::string prefix =
        ends_with(display_path, ".index") ? display_path.substr(0, display_path.size() - 6) : display_path;
    const std::string data = prefix + ".data-00000-of-00001";
    std::set<std::string> names;
    std::uint64_t at = 0;
    auto add = [&](const std::string& name, int datatype, const Shape& shape, std::uint64_t size) {
      if (name.empty()) fail(display_path, "a tensor with an empty name cannot be a TensorFlow checkpoint key");
      if (name == k_tf_provenance_key) fail(display_path, "tensor " + name + ": the key of wavg's provenance");
      if (!names.insert(name).second) fail(display_path, "tensor " + name + " appears twice");
      m_slots.push_back({name, datatype, shape, at, size, 0, 0, true});
      at += size;
    };
    for (const TensorInfo& t : spec.tensors) add(t.name, tf_datatype(t.dtype), t.shape, t.bytes());
    if (const auto* tf = dynamic_cast<const TensorflowReader*>(spec.template_input))
      for (const TfStringTensor& s : tf->string_tensors()) {
        add(s.name, 7, s.shape, s.stored.size);
        m_strings.push_back(&s);
      }
    m_end = at;
    // Every target is checked before any companion exists, so a refusal leaves nothing behind.
    const std::size_t slash = prefix.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : prefix.substr(0, slash + 1);
    m_state_text = "model_checkpoint_path: " + text_proto_quote(prefix.substr(dir.size())) +
                   "\nall_model_checkpoint_paths: " + text_proto_quote(prefix.substr(dir.size())) + "\n";
    // add_companion refuses a companion that is any input's file (AtomicFile knows the inputs' files()).
    // Their names are fixed by the prefix: --force replaces an old checkpoint's files (the old .index goes first).
    retire_old_shards(tmp_path, prefix, data);
    m_data_tmp = add_replacing_companion(tmp_path, data);
    if (spec.write_tf_state) m_state_tmp = add_replacing_companion(tmp_path, dir + "checkpoint");
    m_fd = ::open(m_data_tmp.c_str(), O_RDWR | O_CLOEXEC);  // read back by rehash()
    if (m_fd < 0) fail(display_path, "cannot open the data shard: " + std::string(std::strerror(errno)));
  }

  ~TensorflowWriter() override {
    if (m_fd >= 0) ::close(m_fd);
  }

  bool holds_template_values(std::size_t) const override { return false; }

  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    Slot& s = m_slots[index];
    const std::uint64_t elem = dtype_size(m_spec.tensors[index].dtype);
    const std::uint64_t at = offset * elem, bytes = count * elem;
    WAVG_ASSERT(at + bytes <= s.size);
    pwrite_all(src, bytes, s.offset + at);
    if (s.in_order && at == s.hashed) {
      s.crc = crc32c::extend(s.crc, src, bytes);
      s.hashed += bytes;
    } else {
      s.in_order = false;
    }
  }

  void finish() override {
    const std::size_t first_string = m_spec.tensors.size();
    for (std::size_t i = 0; i < m_strings.size(); ++i) {
      Slot& s = m_slots[first_string + i];
      pwrite_all(m_strings[i]->bytes, s.size, s.offset);
      s.crc = crc32c::unmask(m_strings[i]->stored.masked_crc);  // verified when input 1 was opened
      s.hashed = s.size;
    }
    for (std::size_t i = 0; i < first_string; ++i)
      if (!m_slots[i].in_order || m_slots[i].hashed != m_slots[i].size) rehash(m_slots[i]);
    const auto provenance = m_spec.provenance.entries();
    if (!provenance.empty()) {
      std::uint32_t crc = 0;
      const std::string bytes = tf_encode_scalar_string(nlohmann::json(provenance).dump(), crc);
      pwrite_all(bytes.data(), bytes.size(), m_end);
      m_slots.push_back({k_tf_provenance_key, 7, {}, m_end, bytes.size(), crc, bytes.size(), true});
    }
    if (::close(m_fd) != 0) {
      m_fd = -1;
      fail(m_display, std::string("cannot close the data shard: ") + std::strerror(errno));
    }
    m_fd = -1;
    tftable::write_table(m_tmp, index_entries(), m_display);
    if (m_spec.write_tf_state) write_state();
  }

 private:
  std::vector<std::pair<std::string, std::string>> index_entries() const {
    std::vector<std::pair<std::string, std::string>> entries;
    tfproto::BundleHeaderProto header;
    header.set_num_shards(1);
    header.set_endianness(tfproto::BundleHeaderProto::LITTLE);
    header.mutable_version()->set_producer(1);
    entries.emplace_back("", header.SerializeAsString());
    for (const Slot& s : m_slots) {
      tfproto::BundleEntryProto e;
      e.set_dtype(s.datatype);
      for (const std::uint64_t d : s.shape) e.mutable_shape()->add_dim()->set_size(static_cast<std::int64_t>(d));
      e.set_shard_id(0);
      e.set_offset(static_cast<std::int64_t>(s.offset));
      e.set_size(static_cast<std::int64_t>(s.size));
      e.set_crc32c(crc32c::mask(s.crc));
      entries.emplace_back(s.name, e.SerializeAsString());
    }
    std::sort(entries.begin() + 1, entries.end());
    return entries;
  }

  // Computes a tensor's crc32c from the bytes in the data shard (blocks arrived out of order).
  void rehash(Slot& s) {
    std::vector<char> buf(1 << 20);
    s.crc = 0;
    for (std::uint64_t done = 0; done < s.size;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), s.size - done));
      const ssize_t got = ::pread(m_fd, buf.data(), n, static_cast<off_t>(s.offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) fail(m_display, "cannot read back the data shard: " + std::string(std::strerror(errno)));
      s.crc = crc32c::extend(s.crc, buf.data(), static_cast<std::size_t>(got));
      done += static_cast<std::uint64_t>(got);
    }
  }

  void write_state() const {
    const int fd = ::open(m_state_tmp.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0 || ::write(fd, m_state_text.data(), m_state_text.size()) != static_cast<ssize_t>(m_state_text.size())) {
      const std::string why = std::strerror(errno);
      if (fd >= 0) ::close(fd);
      fail(m_display, "cannot write the checkpoint state file: " + why);
    }
    ::close(fd);
  }

  // Writes into the data shard (wavg/file_io.hpp's loop; a failure names the shard).
  void pwrite_all(const void* data, std::uint64_t bytes, std::uint64_t at) {
    wavg::pwrite_all(m_fd, data, bytes, at, m_display + " (data shard)");
  }

  std::string m_tmp, m_display, m_data_tmp, m_state_tmp, m_state_text;
  const OutputSpec& m_spec;
  std::vector<Slot> m_slots;                     // spec.tensors, then input 1's string tensors, then provenance
  std::vector<const TfStringTensor*> m_strings;  // input 1's, in m_slots after spec.tensors
  std::uint64_t m_end = 0;                       // the data shard's size before the provenance
  int m_fd = -1;
};

}  // namespace

bool is_tensorflow_output_name(const std::string& path) {
  if (ends_with(path, ".index") || ends_with(path, ".ckpt")) return true;
  const std::size_t dash = path.rfind(".ckpt-");
  if (dash == std::string::npos || dash + 6 == path.size()) return false;
  return std::all_of(path.begin() + static_cast<std::ptrdiff_t>(dash + 6), path.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

std::string tensorflow_index_path(const std::string& path) {
  return ends_with(path, ".index") ? path : path + ".index";
}

std::unique_ptr<Writer> create_tensorflow_writer(const std::string& tmp_path, const std::string& display_path,
                                                 const OutputSpec& spec) {
  return std::make_unique<TensorflowWriter>(tmp_path, display_path, spec);
}

}  // namespace wavg
