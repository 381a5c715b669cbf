// The Flax writer (layout in flax.hpp): the whole msgpack structure is packed first into runs of header bytes
// separated by holes for the arrays' data, so the file is sized once, the headers written at once, and every block
// from the engine written in place.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <msgpack.hpp>
#include <unordered_map>
#include <unordered_set>

#include "flax/flax.hpp"
#include "orbax/orbax.hpp"
#include "wavg/error.hpp"
#include "wavg/file_io.hpp"

namespace wavg {

using msgpack_tree::Kind;
using msgpack_tree::Node;

namespace {

constexpr std::uint64_t k_flax_chunk_bytes = std::uint64_t{1} << 30;  // flax's MAX_CHUNK_SIZE

struct Appender {
  std::string& s;
  void write(const char* p, std::size_t n) { s.append(p, n); }
};

// Nested maps built from names split at '/', in the order the names come (an output whose input 1 is no Flax file).
// The children are a vector of NameTree itself, which may hold its own incomplete type (a pair of it may not:
// clang's libstdc++ checks refuse it).
struct NameTree {
  std::string key;  // its name in its parent's map
  std::vector<NameTree> children;
  std::unordered_map<std::string, std::size_t> child_of;  // key -> index in children (a search was quadratic)
  std::size_t tensor = SIZE_MAX;
};

class FlaxWriter final : public Writer {
 public:
  FlaxWriter(const std::string& tmp_path, const std::string& display_path, const OutputSpec& spec,
             std::uint64_t chunk_bytes)
      : m_display(display_path), m_spec(spec), m_chunk_bytes(chunk_bytes), m_pieces(spec.tensors.size()) {
    if (const auto* in = dynamic_cast<const FlaxReader*>(spec.template_input)) {
      emit_template(*in);
    } else {
      emit_names();
    }
    close_run();
    m_fd = ::open(tmp_path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (m_fd < 0) fail(m_display, std::strerror(errno));
    if (::ftruncate(m_fd, static_cast<off_t>(m_at)) != 0)
      fail(m_display, std::string("cannot size the output: ") + std::strerror(errno));
    for (const auto& [at, bytes] : m_runs) pwrite_all(m_fd, bytes.data(), bytes.size(), at, m_display);
    m_runs.clear();
  }

  ~FlaxWriter() override {
    if (m_fd >= 0) ::close(m_fd);
  }

  bool holds_template_values(std::size_t) const override { return false; }

  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    const std::size_t elem = dtype_size(m_spec.tensors[index].dtype);
    for (const FlaxPiece& p : m_pieces[index]) {
      const std::uint64_t lo = std::max(offset, p.first), hi = std::min(offset + count, p.first + p.count);
      if (lo < hi)
        pwrite_all(m_fd, static_cast<const unsigned char*>(src) + (lo - offset) * elem, (hi - lo) * elem,
                   p.at + (lo - p.first) * elem, m_display);
    }
  }

  void finish() override { close_output(m_fd, m_display); }

 private:
  msgpack::packer<Appender> packer() { return msgpack::packer<Appender>(m_appender); }

  // Packs one ndarray extension (type 1, or 3 for a numpy scalar) of `count` elements from `first`, data a hole.
  void pack_array(std::size_t index, std::int8_t type, const Shape& shape, std::uint64_t first, std::uint64_t count) {
    const DType dtype = m_spec.tensors[index].dtype;
    const std::uint64_t bytes = count * dtype_size(dtype);
    std::string inner;
    Appender a{inner};
    msgpack::packer<Appender> p(a);
    p.pack_array(3);
    p.pack_array(static_cast<std::uint32_t>(shape.size()));
    for (std::uint64_t d : shape) p.pack_uint64(d);
    const std::string_view name = dtype_name(dtype);
    p.pack_str(static_cast<std::uint32_t>(name.size()));
    p.pack_str_body(name.data(), static_cast<std::uint32_t>(name.size()));
    p.pack_bin(static_cast<std::uint32_t>(bytes));
    packer().pack_ext(inner.size() + bytes, type);
    m_bytes += inner;
    close_run();
    m_pieces[index].push_back({m_at, first, count});
    m_at += bytes;
  }

  // Packs output tensor `index`, chunked as flax does when its data exceed one msgpack bin.
  void pack_tensor(std::size_t index, std::int8_t scalar_type) {
    const TensorInfo& t = m_spec.tensors[index];
    if (t.bytes() <= m_chunk_bytes) return pack_array(index, t.shape.empty() ? scalar_type : 1, t.shape, 0, t.count());
    const std::uint64_t per_chunk = std::max<std::uint64_t>(1, m_chunk_bytes / dtype_size(t.dtype));
    auto p = packer();
    p.pack_map(3);
    pack_key("__msgpack_chunked_array__");
    p.pack_true();
    pack_key("shape");
    p.pack_map(static_cast<std::uint32_t>(t.shape.size()));
    for (std::size_t d = 0; d < t.shape.size(); ++d) {
      pack_key(std::to_string(d));
      p.pack_uint64(t.shape[d]);
    }
    pack_key("chunks");
    const std::uint64_t n = t.count(), chunks = (n + per_chunk - 1) / per_chunk;
    p.pack_map(static_cast<std::uint32_t>(chunks));
    for (std::uint64_t c = 0; c < chunks; ++c) {
      pack_key(std::to_string(c));
      const std::uint64_t count = std::min(per_chunk, n - c * per_chunk);
      pack_array(index, 1, {count}, c * per_chunk, count);
    }
  }

  void pack_key(std::string_view key) {
    auto p = packer();
    p.pack_str(static_cast<std::uint32_t>(key.size()));
    p.pack_str_body(key.data(), static_cast<std::uint32_t>(key.size()));
  }

  // Input 1's tree: its containers and kept leaves as they were, each of its arrays that the output holds in place.
  void emit_template(const FlaxReader& in) {
    const msgpack_tree::Tree& t = in.tree();
    std::unordered_map<std::string_view, std::size_t> by_name;
    for (std::size_t i = 0; i < m_spec.tensors.size(); ++i) by_name.emplace(m_spec.tensors[i].name, i);
    for (std::size_t i = 0; i < in.tensor_nodes().size(); ++i) {
      const auto it = by_name.find(in.tensors()[i].name);
      if (it != by_name.end()) m_output_of.emplace(in.tensor_nodes()[i], it->second);
    }
    mark_present(t, 0);
    emit_node(t, 0);
    std::vector<bool> placed(m_spec.tensors.size(), false);  // a set, not a search per tensor (quadratic)
    for (const auto& [node, out] : m_output_of) placed[out] = true;
    WAVG_ASSERT(std::find(placed.begin(), placed.end(), false) == placed.end());
  }

  // Tells whether a node is written: a kept leaf, a container that was empty, or one holding something written.
  bool mark_present(const msgpack_tree::Tree& t, std::uint32_t node) {
    const Node& n = t.nodes[node];
    bool present = m_output_of.count(node) > 0;
    if (!present && (n.kind == Kind::map || n.kind == Kind::array) && !is_tensor(t, node)) {
      present = n.count == 0;
      const std::vector<std::uint32_t> c = t.children(node);
      for (std::size_t i = n.kind == Kind::map ? 1 : 0; i < c.size(); i += n.kind == Kind::map ? 2 : 1)
        present = mark_present(t, c[i]) || present;
    } else if (!present) {
      present = !is_tensor(t, node);
    }
    if (present) m_present.insert(node);
    return present;
  }

  bool is_tensor(const msgpack_tree::Tree& t, std::uint32_t node) const {
    const Node& n = t.nodes[node];
    if (n.kind == Kind::ext) return n.ext_type == 1 || n.ext_type == 3;
    if (n.kind != Kind::map) return false;
    const std::vector<std::uint32_t> c = t.children(node);
    for (std::size_t i = 0; i < c.size(); i += 2)
      if (t.nodes[c[i]].kind == Kind::str && t.text(t.nodes[c[i]]) == "__msgpack_chunked_array__") return true;
    return false;
  }

  void emit_node(const msgpack_tree::Tree& t, std::uint32_t node) {
    const Node& n = t.nodes[node];
    auto p = packer();
    if (const auto it = m_output_of.find(node); it != m_output_of.end())
      return pack_tensor(it->second, n.kind == Kind::ext ? n.ext_type : 1);
    const std::vector<std::uint32_t> c = t.children(node);
    const std::size_t step = n.kind == Kind::map ? 2 : 1;
    std::uint32_t kept = 0;
    for (std::size_t i = step - 1; i < c.size(); i += step) kept += m_present.count(c[i]) ? 1 : 0;
    switch (n.kind) {
      case Kind::nil: return p.pack_nil(), void();
      case Kind::boolean: return n.value.b ? p.pack_true() : p.pack_false(), void();
      case Kind::uint: return p.pack_uint64(n.value.u), void();
      case Kind::sint: return p.pack_int64(n.value.i), void();
      case Kind::f32: return p.pack_float(static_cast<float>(n.value.d)), void();
      case Kind::f64: return p.pack_double(n.value.d), void();
      case Kind::str:
        p.pack_str(static_cast<std::uint32_t>(n.size));
        return p.pack_str_body(t.text(n).data(), static_cast<std::uint32_t>(n.size)), void();
      case Kind::bin:
        p.pack_bin(static_cast<std::uint32_t>(n.size));
        return p.pack_bin_body(t.text(n).data(), static_cast<std::uint32_t>(n.size)), void();
      case Kind::ext:
        p.pack_ext(static_cast<std::size_t>(n.size), n.ext_type);
        return p.pack_ext_body(t.text(n).data(), static_cast<std::uint32_t>(n.size)), void();
      case Kind::array:
        p.pack_array(kept);
        for (std::uint32_t item : c)
          if (m_present.count(item)) emit_node(t, item);
        return;
      case Kind::map:
        p.pack_map(kept);
        for (std::size_t i = 0; i + 1 < c.size(); i += 2) {
          if (!m_present.count(c[i + 1])) continue;
          pack_key(t.text(t.nodes[c[i]]));
          emit_node(t, c[i + 1]);
        }
        return;
    }
  }

  // Nested maps from the names, for an input 1 in another format.
  void emit_names() {
    NameTree root;
    for (std::size_t i = 0; i < m_spec.tensors.size(); ++i) {
      const std::string& name = m_spec.tensors[i].name;
      NameTree& at = node_at(root, name);
      if (at.tensor != SIZE_MAX || !at.children.empty())
        fail(m_display, name + ": both an array and a map of arrays in a Flax key path");
      at.tensor = i;
    }
    // The template's empty nodes (an Orbax input's optax EmptyState) as the empty maps flax writes for them, where
    // no array of the output is.
    if (const auto* orbax = dynamic_cast<const orbax::OrbaxReader*>(m_spec.template_input))
      for (const std::string& name : orbax->empty_nodes())
        if (!under_array(root, name)) node_at(root, name);
    emit_name_tree(root);
  }

  // Returns the node of `name` (parts split at '/'), adding maps on the way.
  NameTree& node_at(NameTree& root, const std::string& name) {
    NameTree* at = &root;
    std::size_t from = 0;
    while (true) {
      const std::size_t slash = name.find('/', from);
      const std::string key = name.substr(from, slash == std::string::npos ? std::string::npos : slash - from);
      if (key.empty()) fail(m_display, name + ": an empty part in the name, which cannot be a Flax key path");
      if (at->tensor != SIZE_MAX)
        fail(m_display, name + ": " + name.substr(0, from - 1) + " is an array, so it cannot hold " + key);
      const auto [it, added] = at->child_of.emplace(key, at->children.size());
      if (added) at->children.emplace_back().key = key;
      at = &at->children[it->second];
      if (slash == std::string::npos) return *at;
      from = slash + 1;
    }
  }

  // Tells whether `name` is an array of the tree, or inside one.
  static bool under_array(const NameTree& root, const std::string& name) {
    const NameTree* at = &root;
    for (std::size_t from = 0; at->tensor == SIZE_MAX;) {
      const std::size_t slash = name.find('/', from);
      const auto it = at->child_of.find(name.substr(from, slash == std::string::npos ? std::string::npos : slash - from));
      if (it == at->child_of.end()) return false;
      at = &at->children[it->second];
      if (slash == std::string::npos) return at->tensor != SIZE_MAX;
      from = slash + 1;
    }
    return true;
  }

  void emit_name_tree(const NameTree& node) {
    if (node.tensor != SIZE_MAX) return pack_tensor(node.tensor, 1);
    packer().pack_map(static_cast<std::uint32_t>(node.children.size()));
    for (const NameTree& child : node.children) {
      pack_key(child.key);
      emit_name_tree(child);
    }
  }

  // Ends the current run of header bytes at the current file offset.
  void close_run() {
    if (m_bytes.empty()) return;
    m_runs.emplace_back(m_at, std::move(m_bytes));
    m_at += m_runs.back().second.size();
    m_bytes.clear();
  }

  std::string m_display;
  const OutputSpec& m_spec;
  std::uint64_t m_chunk_bytes;
  std::vector<std::vector<FlaxPiece>> m_pieces;                // per output tensor, where its elements go
  std::unordered_map<std::uint32_t, std::size_t> m_output_of;  // template node -> output tensor
  std::unordered_set<std::uint32_t> m_present;                 // template nodes written
  std::string m_bytes;                                         // header bytes not yet placed
  Appender m_appender{m_bytes};
  std::vector<std::pair<std::uint64_t, std::string>> m_runs;
  std::uint64_t m_at = 0;  // where m_bytes start
  int m_fd = -1;
};

}  // namespace

std::unique_ptr<Writer> create_flax_writer_chunked(const std::string& tmp_path, const std::string& display_path,
                                                   const OutputSpec& spec, std::uint64_t chunk_bytes) {
  return std::make_unique<FlaxWriter>(tmp_path, display_path, spec, chunk_bytes);
}

std::unique_ptr<Writer> create_flax_writer(const std::string& tmp_path, const std::string& display_path,
                                           const OutputSpec& spec) {
  return create_flax_writer_chunked(tmp_path, display_path, spec, k_flax_chunk_bytes);
}

}  // namespace wavg
