// Decoding OCDBT's manifest and B+tree by hand (layout in ocdbt.hpp): a cursor whose every read is checked against
// the bytes left, so that a count or length from the file never reaches past them.

#include "orbax/ocdbt.hpp"

#include <zstd.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include "tensorflow/crc32c.hpp"
#include "wavg/error.hpp"

namespace wavg::orbax {

namespace {

namespace fs = std::filesystem;

constexpr std::uint32_t k_manifest_magic = 0x0cdb3a2a;
constexpr std::uint32_t k_btree_magic = 0x0cdb20de;
constexpr std::uint64_t k_max_arity = 1u << 20;        // tensorstore's kMaxNodeArity
constexpr std::uint64_t k_max_path = 65535;            // tensorstore's kMaxPathLength
constexpr std::uint64_t k_max_node_bytes = 64u << 20;  // no writer's node is near it (8 MiB by default)
// What one walk may decode and hold, in all: a floor, then a multiple of the node bytes read from the files. A
// prefix-compressed key costs a few bytes on disk however long it is, and a zstd body can be a thousand times its
// encoded size; tensorstore's trees stay far inside these (keys about 6x, bodies about 3x their encoded bytes), so
// the bounds refuse only a tree made to exhaust memory or time.
constexpr std::uint64_t k_budget_floor = 64u << 20;
constexpr std::uint64_t k_budget_factor = 64;

// Reads a body front to back; every read checks the bytes left and fails naming the structure.
class Cursor {
 public:
  Cursor(const std::string& file, std::string what, std::string_view bytes)
      : m_file(file), m_what(std::move(what)), m_bytes(bytes) {}

  [[noreturn]] void bad(const std::string& why) const { fail(m_file, m_what + ": " + why); }
  std::size_t left() const { return m_bytes.size() - m_at; }

  std::uint8_t byte(const char* field) {
    if (left() < 1) bad("ends inside " + std::string(field));
    return static_cast<std::uint8_t>(m_bytes[m_at++]);
  }
  std::uint64_t varint(const char* field) {
    std::uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
      const std::uint8_t b = byte(field);
      if (shift == 63 && b > 1) bad(std::string(field) + " is a varint above 64 bits");
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      if (shift == 63) bad(std::string(field) + " is a varint above 64 bits");
    }
  }
  // A varint that counts items of at least `min_bytes` bytes each still to come: never more than the bytes left.
  std::uint64_t count(const char* field, std::uint64_t max, std::uint64_t min_bytes = 1) {
    const std::uint64_t n = varint(field);
    if (n > max || n > left() / min_bytes)
      bad(std::string(field) + " is " + std::to_string(n) + ", more than " +
          (n > max ? "the format allows (" + std::to_string(max) + ")" : "the bytes left hold"));
    return n;
  }
  std::uint64_t u64le(const char* field) {
    if (left() < 8) bad("ends inside " + std::string(field));
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(m_bytes[m_at + i]);
    m_at += 8;
    return v;
  }
  std::string_view take(std::uint64_t n, const char* field) {
    if (n > left()) bad(std::string(field) + " of " + std::to_string(n) + " bytes runs past the end");
    const std::string_view s = m_bytes.substr(m_at, n);
    m_at += n;
    return s;
  }
  void skip(std::uint64_t n, const char* field) { take(n, field); }
  void end() const {
    if (left()) bad(std::to_string(left()) + " bytes follow its end");
  }

 private:
  const std::string& m_file;
  std::string m_what;
  std::string_view m_bytes;
  std::size_t m_at = 0;
};

// One file of a data file table: its full path, and the prefix the nodes reached through it extend.
struct DataFile {
  std::string path;
  std::string transitive;
};

// A path of a data file table climbs out of the database folder: refused (tensorstore's own writer never makes one).
bool climbs(const std::string& path) {
  if (path.empty() || path.front() == '/') return true;
  for (std::size_t at = 0; at <= path.size();) {
    const std::size_t slash = std::min(path.find('/', at), path.size());
    if (path.compare(at, slash - at, "..") == 0 && slash - at == 2) return true;
    at = slash + 1;
  }
  return false;
}

std::vector<DataFile> data_file_table(Cursor& c, const std::string& transitive) {
  const std::uint64_t n = c.count("the data file count", k_max_arity);
  std::vector<std::uint64_t> prefix(n, 0), suffix(n), base(n);
  for (std::uint64_t i = 1; i < n; ++i) prefix[i] = c.varint("a data file's path prefix length");
  for (auto& s : suffix) s = c.varint("a data file's path suffix length");
  for (auto& b : base) b = c.varint("a data file's base path length");
  std::vector<DataFile> files(n);
  std::string last;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (prefix[i] > last.size())
      c.bad("data file " + std::to_string(i) + " shares " + std::to_string(prefix[i]) + " bytes with a path of " +
            std::to_string(last.size()));
    if (suffix[i] > k_max_path || prefix[i] + suffix[i] + transitive.size() > k_max_path)
      c.bad("data file " + std::to_string(i) + "'s path is longer than 65535 bytes");
    const std::string path = last.substr(0, prefix[i]) + std::string(c.take(suffix[i], "a data file's path"));
    if (base[i] > path.size())
      c.bad("data file " + std::to_string(i) + "'s base path of " + std::to_string(base[i]) +
            " bytes is longer than its path");
    files[i] = {transitive + path, transitive + path.substr(0, base[i])};
    if (climbs(files[i].path)) c.bad("data file path '" + clipped(files[i].path, 80) + "' leaves the folder");
    last = path;
  }
  return files;
}

const DataFile& file_id(Cursor& c, const std::vector<DataFile>& table) {
  const std::uint64_t id = c.varint("a data file id");
  if (id >= table.size())
    c.bad("data file id " + std::to_string(id) + " past its table of " + std::to_string(table.size()));
  return table[id];
}

// A reference to a B+tree node: where it lies, the height it must have, the key prefix its keys extend.
struct NodeRef {
  DataFile where;
  std::uint64_t offset = 0, length = 0;
  std::uint8_t height = 0;
  std::string prefix;
};

struct Walk {
  const std::string& folder;
  const OcdbtFiles& files;
  std::uint64_t max_body;
  OcdbtKeys keys;
  std::set<std::pair<std::string, std::uint64_t>> seen;  // the nodes walked: a B+tree node has one parent
  std::uint64_t encoded = 0;                               // node bytes read from the files
  std::uint64_t decoded = 0;                               // their bodies' bytes, decompressed
  std::uint64_t key_bytes = 0;                             // key and prefix bytes made from them

  std::uint64_t budget() const { return k_budget_floor + k_budget_factor * encoded; }
};

// The keys of a node: num_entries - 1 prefix lengths, the suffix lengths, (interior) the subtree prefixes, the
// suffixes; each key longer than the one before.
// Keys are checked for length, and their bytes with the node's `prefix` (each key and each child's prefix holds a
// copy) counted against the walk's budget, before any is made.
std::vector<std::string> node_keys(Cursor& c, Walk& w, std::uint64_t prefix_bytes, std::uint64_t n, bool interior,
                                   std::vector<std::uint64_t>& subtree) {
  std::vector<std::uint64_t> prefix(n, 0), suffix(n);
  for (std::uint64_t i = 1; i < n; ++i) prefix[i] = c.varint("a key prefix length");
  for (auto& s : suffix) s = c.varint("a key suffix length");
  if (interior) {
    subtree.resize(n);
    for (auto& s : subtree) s = c.varint("a subtree common prefix length");
  }
  std::uint64_t length = 0, total = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (prefix[i] > length)
      c.bad("key " + std::to_string(i) + " shares more bytes with the key before than it has");
    if (suffix[i] > k_max_path || prefix_bytes + prefix[i] + suffix[i] > k_max_path)
      c.bad("key " + std::to_string(i) + " is longer than 65535 bytes");
    length = prefix[i] + suffix[i];
    total += (interior ? 2 : 1) * (prefix_bytes + length);
  }
  w.key_bytes += total;
  if (w.key_bytes > w.budget())
    c.bad("its keys take " + std::to_string(w.key_bytes) + " bytes with those before, from " +
          std::to_string(w.encoded) + " bytes of nodes (more than " + std::to_string(k_budget_factor) +
          " times, which no OCDBT writer makes)");
  std::vector<std::string> keys(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::string& last = i ? keys[i - 1] : keys[0];
    keys[i] = (i ? last.substr(0, prefix[i]) : std::string()) + std::string(c.take(suffix[i], "a key"));
    if (i && keys[i] <= keys[i - 1]) c.bad("its keys are out of order");
    if (interior && subtree[i] > keys[i].size()) c.bad("a subtree prefix is longer than its key");
  }
  return keys;
}

void walk_node(Walk& w, const NodeRef& ref) {
  const std::string what = "the B+tree node at " + ref.where.path + ":" + std::to_string(ref.offset);
  if (!w.seen.emplace(ref.where.path, ref.offset).second)
    fail(w.folder, what + " is reached a second time (a B+tree node has one parent)");
  const std::span<const unsigned char> encoded = w.files(ref.where.path, ref.offset, ref.length);
  w.encoded += encoded.size();
  // A body may decompress only into what is left of the walk's budget, so that many small nodes cannot each
  // expand to the per-node limit.
  const std::uint64_t left = w.budget() > w.decoded ? w.budget() - w.decoded : 0;
  const std::string body = ocdbt_body(w.folder, what, k_btree_magic, encoded, std::min(w.max_body, left));
  w.decoded += body.size();
  Cursor c(w.folder, what, body);
  const std::uint8_t height = c.byte("the height");
  if (height != ref.height)
    c.bad("height " + std::to_string(height) + " where its parent says " + std::to_string(ref.height));
  const std::vector<DataFile> table = data_file_table(c, ref.where.transitive);
  const std::uint64_t n = c.count("the entry count", k_max_arity);
  if (n == 0) c.bad("no entries");
  std::vector<std::uint64_t> subtree;
  const std::vector<std::string> keys = node_keys(c, w, ref.prefix.size(), n, height > 0, subtree);
  if (height > 0) {
    std::vector<NodeRef> children(n);
    for (auto& ch : children) ch.where = file_id(c, table);
    for (auto& ch : children) ch.offset = c.varint("a child's offset");
    for (auto& ch : children) ch.length = c.varint("a child's length");
    for (int stat = 0; stat < 3; ++stat)
      for (std::uint64_t i = 0; i < n; ++i) c.varint("a child's statistics");
    c.end();
    for (std::uint64_t i = 0; i < n; ++i) {
      children[i].height = static_cast<std::uint8_t>(height - 1);
      children[i].prefix = ref.prefix + keys[i].substr(0, subtree[i]);
      walk_node(w, children[i]);
    }
    return;
  }
  std::vector<std::uint64_t> length(n);
  std::vector<std::uint8_t> kind(n);
  for (auto& l : length) l = c.varint("a value length");
  for (auto& k : kind) {
    k = c.byte("a value kind");
    if (k > 1) c.bad("value kind " + std::to_string(k) + " (0 inline, 1 in a data file)");
  }
  std::vector<OcdbtValue> values(n);
  for (std::uint64_t i = 0; i < n; ++i)
    if (kind[i]) values[i].file = file_id(c, table).path;
  for (std::uint64_t i = 0; i < n; ++i)
    if (kind[i]) {
      values[i].offset = c.varint("a value's offset");
      values[i].length = length[i];
      if (values[i].offset > UINT64_MAX - length[i]) c.bad("a value's offset plus length overflows");
    }
  for (std::uint64_t i = 0; i < n; ++i)
    if (!kind[i]) {
      values[i].length = length[i];
      values[i].bytes = std::string(c.take(length[i], "an inline value"));
    }
  c.end();
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string key = ref.prefix + keys[i];
    if (!w.keys.empty() && key <= w.keys.rbegin()->first)
      c.bad("key '" + clipped(key, 80) + "' comes after a greater or equal key of another node");
    w.keys.emplace_hint(w.keys.end(), std::move(key), std::move(values[i]));
  }
}

}  // namespace

std::string ocdbt_body(const std::string& file, const std::string& what, std::uint32_t magic,
                       std::span<const unsigned char> encoded, std::uint64_t max_body) {
  const std::string_view all(reinterpret_cast<const char*>(encoded.data()), encoded.size());
  if (all.size() < 4 + 8 + 1 + 1 + 4) fail(file, what + ": " + std::to_string(all.size()) + " bytes, too short");
  Cursor head(file, what, all.substr(0, all.size() - 4));
  std::uint32_t found = 0;
  for (int i = 0; i < 4; ++i) found = (found << 8) | head.byte("the magic");
  if (found != magic) {
    char hex[64];
    std::snprintf(hex, sizeof hex, "magic 0x%08x where 0x%08x belongs", found, magic);
    head.bad(hex);
  }
  const std::uint64_t length = head.u64le("the length");
  if (length != all.size())
    head.bad("its header says " + std::to_string(length) + " bytes, it has " + std::to_string(all.size()));
  std::uint32_t stored = 0;
  for (int i = 3; i >= 0; --i) stored = (stored << 8) | static_cast<std::uint8_t>(all[all.size() - 4 + i]);
  if (crc32c::extend(0, all.data(), all.size() - 4) != stored) head.bad("its CRC-32C does not match (corrupt)");
  if (const std::uint64_t v = head.varint("the version"); v != 0)
    head.bad("format version " + std::to_string(v) + " (wavg reads version 0)");
  const std::uint64_t compression = head.varint("the compression");
  const std::string_view rest = head.take(head.left(), "the body");
  if (compression == 0) {
    if (rest.size() > max_body) head.bad("a body of " + std::to_string(rest.size()) + " bytes, above its limit");
    return std::string(rest);
  }
  if (compression != 1) head.bad("compression " + std::to_string(compression) + " (0 none, 1 zstd)");
  // Streamed with a cap: a frame's declared size may be absent or false.
  std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> z(ZSTD_createDStream(), ZSTD_freeDStream);
  if (!z) throw std::bad_alloc();
  ZSTD_initDStream(z.get());
  std::string out;
  ZSTD_inBuffer in{rest.data(), rest.size(), 0};
  std::size_t status = 1;
  while (in.pos < in.size || status != 0) {
    const std::size_t before = out.size();
    if (before >= max_body + 1) head.bad("decompresses to more than " + std::to_string(max_body) + " bytes");
    out.resize(std::min<std::uint64_t>(max_body + 1, before + std::max<std::size_t>(before, 1u << 16)));
    ZSTD_outBuffer o{out.data() + before, out.size() - before, 0};
    status = ZSTD_decompressStream(z.get(), &o, &in);
    if (ZSTD_isError(status)) head.bad(std::string("zstd: ") + ZSTD_getErrorName(status));
    out.resize(before + o.pos);
    if (in.pos == in.size && status != 0 && o.pos == 0) head.bad("its zstd stream ends early");
  }
  if (out.size() > max_body) head.bad("decompresses to more than " + std::to_string(max_body) + " bytes");
  return out;
}

OcdbtRoot ocdbt_manifest(const std::string& file, std::span<const unsigned char> encoded) {
  const std::string body = ocdbt_body(file, "the manifest", k_manifest_magic, encoded, k_max_node_bytes);
  Cursor c(file, "the manifest", body);
  OcdbtRoot root;
  c.skip(16, "the uuid");
  const std::uint8_t kind = c.byte("the manifest kind");
  if (kind > 1) c.bad("manifest kind " + std::to_string(kind) + " (0 single, 1 numbered)");
  c.varint("max_inline_value_bytes");
  root.max_node_bytes = std::min(c.varint("max_decoded_node_bytes"), k_max_node_bytes);
  const std::uint8_t arity = c.byte("version_tree_arity_log2");
  if (arity < 1 || arity > 16) c.bad("version_tree_arity_log2 " + std::to_string(arity) + " (1 to 16)");
  const std::uint64_t method = c.varint("the compression method");
  if (method == 1)
    c.skip(4, "the zstd level");
  else if (method != 0)
    c.bad("compression method " + std::to_string(method) + " (0 none, 1 zstd)");
  if (kind == 1) {
    root.numbered = true;
    c.end();
    return root;
  }
  const std::vector<DataFile> table = data_file_table(c, "");
  const std::uint64_t n = c.count("the version count", std::uint64_t{1} << arity);
  if (n == 0) c.bad("no version");
  std::vector<std::uint64_t> generation(n), offset(n), length(n);
  std::vector<std::uint8_t> height(n);
  std::vector<const DataFile*> where(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    generation[i] = c.varint("a generation number");
    if (generation[i] == 0 || (i && generation[i] <= generation[i - 1]))
      c.bad("its generation numbers are not increasing from 1");
  }
  for (auto& h : height) h = c.byte("a root height");
  for (auto& w : where) w = &file_id(c, table);
  for (auto& o : offset) o = c.varint("a root's offset");
  for (auto& l : length) l = c.varint("a root's length");
  for (int stat = 0; stat < 3; ++stat)
    for (std::uint64_t i = 0; i < n; ++i) c.varint("a version's statistics");
  for (std::uint64_t i = 0; i < n; ++i) c.u64le("a commit time");
  // The older versions' nodes: read past, checked for size only.
  const std::uint64_t m = c.count("the version node count", 64);
  for (int column = 0; column < 4; ++column)
    for (std::uint64_t i = 0; i < m; ++i) column == 1 ? (void)file_id(c, table) : (void)c.varint("a version node");
  for (std::uint64_t i = 0; i < m; ++i) c.varint("a version node's generation count");
  for (std::uint64_t i = 0; i < m; ++i) c.u64le("a version node's commit time");
  for (std::uint64_t i = 0; i < m; ++i) c.byte("a version node's height");
  c.end();
  // tensorstore marks a missing root (an empty store) by the largest offset and length.
  if (offset.back() == UINT64_MAX && length.back() == UINT64_MAX) {
    root.empty = true;
    return root;
  }
  root.file = where.back()->path;
  root.offset = offset.back();
  root.length = length.back();
  root.height = height.back();
  return root;
}

OcdbtKeys ocdbt_keys(const std::string& folder, const OcdbtRoot& root, const OcdbtFiles& files) {
  Walk w{folder, files, std::max<std::uint64_t>(root.max_node_bytes, 1u << 16), {}, {}};
  if (root.empty) return {};
  NodeRef ref;
  ref.where = {root.file, ""};
  ref.offset = root.offset;
  ref.length = root.length;
  ref.height = root.height;
  walk_node(w, ref);
  return std::move(w.keys);
}

OcdbtStore::OcdbtStore(std::string folder) : m_folder(std::move(folder)) {
  const std::string manifest_path = m_folder + "/manifest.ocdbt";
  OcdbtRoot root;
  {
    const MappedFile manifest(manifest_path);
    root = ocdbt_manifest(manifest_path, {manifest.data(), static_cast<std::size_t>(manifest.size())});
  }
  if (root.numbered) {
    // The version tree lies in the numbered manifest of the highest generation.
    static const std::regex numbered("manifest\\.[0-9a-f]{16}");
    std::string latest;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(m_folder, ec)) {
      const std::string name = e.path().filename().string();
      if (std::regex_match(name, numbered) && name > latest) latest = name;
    }
    if (latest.empty()) fail(manifest_path, "a numbered manifest, but no manifest.XXXXXXXXXXXXXXXX beside it");
    const MappedFile manifest(m_folder + "/" + latest);
    root = ocdbt_manifest(manifest.path(), {manifest.data(), static_cast<std::size_t>(manifest.size())});
    if (root.numbered) fail(manifest.path(), "a numbered manifest names no version");
  }
  m_keys = ocdbt_keys(m_folder, root, [this](const std::string& p, std::uint64_t o, std::uint64_t l) {
    return range(p, o, l);
  });
}

OcdbtStore::~OcdbtStore() = default;

std::span<const unsigned char> OcdbtStore::range(const std::string& path, std::uint64_t offset,
                                                 std::uint64_t length) {
  auto it = m_files.find(path);
  if (it == m_files.end()) {
    const std::string full = m_folder + "/" + path;
    std::error_code ec;
    if (!fs::exists(full, ec)) fail(full, "missing: the OCDBT store keeps data in it (a process's files not copied?)");
    it = m_files.emplace(path, std::make_unique<MappedFile>(full)).first;
  }
  const MappedFile& f = *it->second;
  if (!f.contains(offset, length))
    fail(f.path(), "bytes " + std::to_string(offset) + " to " + std::to_string(offset) + "+" + std::to_string(length) +
                       " lie past its end (" + std::to_string(f.size()) + " bytes)");
  return {f.data() + offset, static_cast<std::size_t>(length)};
}

std::span<const unsigned char> OcdbtStore::bytes(const OcdbtValue& value) {
  if (value.file.empty())
    return {reinterpret_cast<const unsigned char*>(value.bytes.data()), value.bytes.size()};
  return range(value.file, value.offset, value.length);
}

std::vector<std::string> OcdbtStore::files() const {
  std::vector<std::string> out;
  for (const auto& [name, f] : m_files) out.push_back(name);
  return out;
}

}  // namespace wavg::orbax
