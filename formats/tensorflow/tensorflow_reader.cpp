// Reading TensorFlow checkpoints: the .index table walked once (tf_table.hpp), each entry parsed and checked, the
// data shards mapped, and every tensor's crc32c verified before the reader is handed out (layout in
// tensorflow.hpp).

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/byte_cursor.hpp"
#include "common/shared_bytes.hpp"
#include "formats/tensorflow/tensor_bundle.pb.h"
#include "tensorflow/crc32c.hpp"
#include "tensorflow/tensorflow.hpp"
#include "tensorflow/tf_dtype.hpp"
#include "tensorflow/tf_table.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/error.hpp"

namespace wavg {

static_assert(std::endian::native == std::endian::little, "TensorBundle data is read as little-endian");

namespace {

constexpr std::uint32_t k_max_shards = 1u << 20;
constexpr int k_bundle_version = 1;  // TensorFlow's kTensorBundleVersion

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// TensorFlow's DataFilename: PREFIX.data-%05d-of-%05d.
std::string shard_name(const std::string& prefix, std::uint32_t shard, std::uint32_t shards) {
  char tail[48];
  std::snprintf(tail, sizeof tail, ".data-%05u-of-%05u", shard, shards);
  return prefix + tail;
}

// Verifies a DT_STRING tensor's bytes: varint64 lengths, their masked checksum, then exactly the strings' bytes.
bool string_crc_ok(const unsigned char* p, std::uint64_t size, std::uint64_t count, std::uint32_t masked) {
  const unsigned char* const end = p + size;
  std::uint32_t crc = 0;
  std::uint64_t total = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t v = 0;
    if (!decode_varint(p, end, v)) return false;
    if (v <= 0xffffffffu) {
      const auto v32 = static_cast<std::uint32_t>(v);
      crc = crc32c::extend(crc, &v32, 4);
    } else {
      crc = crc32c::extend(crc, &v, 8);
    }
    if (v > size) return false;
    total += v;
    if (total > size) return false;
  }
  if (end - p < 4) return false;
  std::uint32_t length_crc = 0;
  std::memcpy(&length_crc, p, 4);
  if (crc32c::unmask(length_crc) != crc) return false;
  crc = crc32c::extend(crc, p, 4);
  p += 4;
  if (static_cast<std::uint64_t>(end - p) != total) return false;
  return crc32c::extend(crc, p, total) == crc32c::unmask(masked);
}

}  // namespace

bool is_tensorflow_prefix(const std::string& path) { return !is_file(path) && is_file(path + ".index"); }

bool looks_like_tensorflow(const SniffInput& input) {
  // A prefix names no file (its bytes are PREFIX.index's, which open_reader does not map for sniffers); PREFIX.index
  // and a TF1 V1 checkpoint both end with LevelDB's table magic.
  if (input.bytes().empty()) return is_tensorflow_prefix(input.path());
  return has_table_magic(input.bytes());
}

TensorflowReader::TensorflowReader(std::string path) : MappedPiecesReader(std::move(path), FormatId::tensorflow) {
  m_prefix =
      ends_with(m_path, ".index") && !is_tensorflow_prefix(m_path) ? m_path.substr(0, m_path.size() - 6) : m_path;
  read_index();
  open_shards();
  check_crcs();
  const auto graph = std::find_if(m_strings.begin(), m_strings.end(),
                                  [](const TfStringTensor& s) { return s.name == "_CHECKPOINTABLE_OBJECT_GRAPH"; });
  m_layout = graph != m_strings.end() ? "TF2 object-based checkpoint" : "TF1 name-based checkpoint";
  if (graph != m_strings.end() && graph->shape.empty()) {
    const std::string bytes = tf_scalar_string(graph->bytes, graph->stored.size);
    set_tensorflow_roles(m_tensors, &bytes, m_path);
  } else {
    set_tensorflow_roles(m_tensors, nullptr, m_path);
  }
}

TensorflowReader::~TensorflowReader() = default;

std::vector<std::string> TensorflowReader::files() const { return m_protected; }

void TensorflowReader::read_index() {
  const std::string index_path = m_prefix + ".index";
  const MappedFile index(index_path);
  m_protected.push_back(index_path);
  bool header = false;
  tftable::read_table(index.data(), index.size(), m_path, [&](const std::string& key, const std::string& value) {
    if (!header) {
      if (!key.empty()) fail(m_path, "the index has no header entry (its first key is \"" + key + "\")");
      tfproto::BundleHeaderProto h;
      if (!h.ParseFromString(value)) fail(m_path, "the header entry is not a valid BundleHeaderProto");
      if (h.num_shards() < 1 || static_cast<std::uint32_t>(h.num_shards()) > k_max_shards)
        fail(m_path, "the header says " + std::to_string(h.num_shards()) + " data shards");
      if (h.endianness() != tfproto::BundleHeaderProto::LITTLE)
        fail(m_path, "a big-endian checkpoint (wavg reads little-endian ones)");
      if (h.version().min_consumer() > k_bundle_version)
        fail(m_path, "the checkpoint needs a reader of bundle version " + std::to_string(h.version().min_consumer()) +
                         " (wavg reads version " + std::to_string(k_bundle_version) + ")");
      m_num_shards = static_cast<std::uint32_t>(h.num_shards());
      header = true;
      return;
    }
    add_entry(key, value);
  });
  if (!header) fail(m_path, "the index is empty (no header entry)");
}

void TensorflowReader::add_entry(const std::string& key, const std::string& value) {
  const std::string what = "tensor " + key + ": ";
  tfproto::BundleEntryProto e;
  if (!e.ParseFromString(value)) fail(m_path, what + "its entry is not a valid BundleEntryProto");
  if (e.slices_size() > 0)
    fail(m_path, what + "a partitioned variable (" + std::to_string(e.slices_size()) +
                     " slices); wavg reads whole variables only");
  const TfType type = tf_type(e.dtype());
  if (type.kind == TfKind::refused) fail(m_path, what + "dtype " + type.name + " is not supported");
  if (e.shape().unknown_rank()) fail(m_path, what + "its shape has unknown rank");
  Shape shape;
  for (const auto& d : e.shape().dim()) {
    if (d.size() < 0) fail(m_path, what + "its shape has a negative dimension");
    shape.push_back(static_cast<std::uint64_t>(d.size()));
  }
  std::uint64_t count = 0;
  if (!checked_count(shape, type.kind == TfKind::number ? dtype_size(type.dtype) : 1, count))
    fail(m_path, what + "shape " + shape_string(shape) + " overflows");
  if (e.shard_id() < 0 || static_cast<std::uint32_t>(e.shard_id()) >= m_num_shards)
    fail(m_path, what + "shard id " + std::to_string(e.shard_id()) + ", but the header says " +
                     std::to_string(m_num_shards) + " shard(s)");
  if (e.offset() < 0 || e.size() < 0) fail(m_path, what + "negative offset or size");
  const TfStored stored{static_cast<std::uint32_t>(e.shard_id()), static_cast<std::uint64_t>(e.offset()),
                        static_cast<std::uint64_t>(e.size()), e.crc32c()};
  if (type.kind == TfKind::string) {
    m_strings.push_back({key, shape, stored, nullptr});
    return;
  }
  const TensorInfo info{key, type.dtype, shape};
  if (stored.size != info.bytes())
    fail(m_path, what + "its entry says " + std::to_string(stored.size) + " bytes, but " +
                     std::string(dtype_name(type.dtype)) + " " + shape_string(shape) + " needs " +
                     std::to_string(info.bytes()));
  m_tensors.push_back(info);
  m_stored.push_back(stored);
}

void TensorflowReader::open_shards() {
  m_shards.resize(m_num_shards);
  auto open = [&](const std::string& name, const TfStored& s) {
    auto& shard = m_shards[s.shard];
    if (!shard) {
      const std::string file = shard_name(m_prefix, s.shard, m_num_shards);
      try {
        shard = std::make_unique<MappedFile>(file);
      } catch (const Error& e) {
        fail(m_path, "data shard " + file.substr(file.rfind('/') + 1) + ": " + e.problems().front().what);
      }
      m_protected.push_back(file);
    }
    if (!shard->contains(s.offset, s.size))
      fail(m_path, "tensor " + name + ": bytes [" + std::to_string(s.offset) + ", " +
                       std::to_string(s.offset + s.size) + ") lie past the end of " + shard->path() + " (" +
                       std::to_string(shard->size()) + " bytes)");
  };
  for (std::size_t i = 0; i < m_tensors.size(); ++i) open(m_tensors[i].name, m_stored[i]);
  for (TfStringTensor& s : m_strings) {
    open(s.name, s.stored);
    s.bytes = m_shards[s.stored.shard]->data() + s.stored.offset;
  }
  check_no_overlap();
}

void TensorflowReader::check_no_overlap() const {
  // TensorFlow's BundleWriter appends each tensor once; entries sharing bytes would make the checksums (and the
  // merge) read one region once per entry, so a byte range named twice is refused.
  const std::size_t n = m_tensors.size();
  auto name_of = [&](std::size_t k) -> const std::string& { return k < n ? m_tensors[k].name : m_strings[k - n].name; };
  std::vector<StoredRegion> regions;
  for (std::size_t i = 0; i < n; ++i) regions.push_back({m_stored[i].shard, m_stored[i].offset, m_stored[i].size, i});
  for (std::size_t j = 0; j < m_strings.size(); ++j)
    regions.push_back({m_strings[j].stored.shard, m_strings[j].stored.offset, m_strings[j].stored.size, n + j});
  if (const auto both = shared_bytes(std::move(regions))) {
    const TfStored& first = both->first < n ? m_stored[both->first] : m_strings[both->first - n].stored;
    const std::string& shard = m_shards[first.shard]->path();
    fail(m_path, "tensors " + name_of(both->first) + " and " + name_of(both->second) + " share bytes of " +
                     shard.substr(shard.rfind('/') + 1) + " (TensorFlow never writes overlapping entries)");
  }
}

namespace {

// Tensors of at least this many bytes are checked through pread() rather than the mapping.
constexpr std::uint64_t k_crc_pread_min = 1u << 20;

// A shard's file descriptor for check_crcs' preads, opened on first use and closed with it.
class ShardFd {
 public:
  ~ShardFd() {
    if (m_fd >= 0) ::close(m_fd);
  }
  int get(const std::string& path) {
    if (m_fd < 0) m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (m_fd < 0) fail(path, std::string("cannot read: ") + std::strerror(errno));
    return m_fd;
  }

 private:
  int m_fd = -1;
};

// The CRC-32C of `size` bytes at `offset` of `fd`, read in pieces into `buf`.
std::uint32_t crc_by_pread(int fd, const std::string& path, std::uint64_t offset, std::uint64_t size,
                           std::vector<unsigned char>& buf) {
  buf.resize(k_crc_pread_min);
  std::uint32_t crc = 0;
  while (size > 0) {
    const ssize_t n = ::pread(fd, buf.data(), std::min<std::uint64_t>(size, buf.size()), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path, std::string("read failed: ") + std::strerror(errno));
    if (n == 0) fail(path, "the file ended while its checksums were checked (was it truncated?)");
    crc = crc32c::extend(crc, buf.data(), static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
    size -= static_cast<std::uint64_t>(n);
  }
  return crc;
}

}  // namespace

void TensorflowReader::check_crcs() {
  // A large tensor is read with pread() into a small buffer rather than through the mapping: pages faulted in here
  // and released would be faulted in again when the merge reads them (issue 43: a TensorFlow merge took 1.51x its
  // floor). Small tensors keep the mapping: one system call each would cost more than their pages.
  std::vector<ShardFd> fds(m_shards.size());
  std::vector<unsigned char> buf;
  for (std::size_t i = 0; i < m_tensors.size(); ++i) {
    const TfStored& s = m_stored[i];
    const MappedFile& shard = *m_shards[s.shard];
    std::uint32_t crc = 0;
    if (s.size >= k_crc_pread_min) {
      crc = crc_by_pread(fds[s.shard].get(shard.path()), shard.path(), s.offset, s.size, buf);
    } else {
      crc = crc32c::extend(0, shard.data() + s.offset, s.size);
      shard.release(s.offset, s.offset + s.size);
    }
    if (crc != crc32c::unmask(s.masked_crc)) fail(m_path, "tensor " + m_tensors[i].name + ": checksum mismatch");
  }
  std::vector<TfStringTensor> kept;
  for (const TfStringTensor& s : m_strings) {
    std::uint64_t count = 0;
    checked_count(s.shape, 1, count);
    if (!string_crc_ok(s.bytes, s.stored.size, count, s.stored.masked_crc))
      fail(m_path, "tensor " + s.name + ": checksum mismatch");
    if (s.name != k_tf_provenance_key || !s.shape.empty()) {
      kept.push_back(s);
      continue;
    }
    // wavg's own provenance: a scalar string holding a JSON object of strings, shown as metadata, never copied.
    const std::string text = tf_scalar_string(s.bytes, s.stored.size);
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_object())
      for (const auto& [k, v] : j.items())
        if (v.is_string()) m_metadata[k] = v.get<std::string>();
  }
  m_strings = std::move(kept);
}

void TensorflowReader::pieces(std::size_t index, std::uint64_t offset, std::uint64_t count, const PieceFn& f) const {
  WAVG_ASSERT(index < m_tensors.size() && offset + count <= m_tensors[index].count());
  const TfStored& s = m_stored[index];
  if (count > 0) f({m_shards[s.shard].get(), s.offset + offset * dtype_size(m_tensors[index].dtype), 0, count});
}

}  // namespace wavg
