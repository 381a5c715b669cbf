// The Flax reader (layout in flax.hpp): the file is parsed once into msgpack_tree's node list, then walked from the
// root map, every ndarray payload parsed as its own small msgpack value and checked against the bytes holding it.

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>

#include "flax/flax.hpp"
#include "wavg/error.hpp"

namespace wavg {

static_assert(std::endian::native == std::endian::little, "Flax files are read as little-endian");

using msgpack_tree::Kind;
using msgpack_tree::Node;

namespace {

constexpr std::int8_t k_ext_ndarray = 1;
constexpr std::int8_t k_ext_complex = 2;
constexpr std::int8_t k_ext_scalar = 3;
constexpr std::string_view k_chunked_key = "__msgpack_chunked_array__";

std::string join(const std::string& name, std::string_view key) {
  return name.empty() ? std::string(key) : name + "/" + std::string(key);
}

std::string shown(const std::string& name) { return name.empty() ? "the top level" : name; }

// A kept leaf as -v and inspect list it: "step (int 3)".
std::string describe(const msgpack_tree::Tree& t, const Node& n) {
  switch (n.kind) {
    case Kind::nil: return "nil";
    case Kind::boolean: return n.value.b ? "bool true" : "bool false";
    case Kind::uint: return "int " + std::to_string(n.value.u);
    case Kind::sint: return "int " + std::to_string(n.value.i);
    case Kind::f32:
    case Kind::f64: {
      char s[40];
      std::snprintf(s, sizeof s, "float %.17g", n.value.d);
      return s;
    }
    case Kind::str: {
      const std::string_view s = t.text(n);
      return s.size() <= 40 ? "string '" + std::string(s) + "'" : "string of " + std::to_string(s.size()) + " bytes";
    }
    case Kind::bin: return "binary, " + std::to_string(n.size) + " bytes";
    case Kind::ext:
      return n.ext_type == k_ext_complex ? "complex" : "msgpack extension type " + std::to_string(n.ext_type);
    case Kind::array: return "array of " + std::to_string(n.count);
    case Kind::map: return "map";
  }
  return "";
}

// The key-value pairs of a map node, keys checked: strings, not empty, without '/', each once.
std::vector<std::pair<std::string_view, std::uint32_t>> map_items(const std::string& file, const msgpack_tree::Tree& t,
                                                                  std::uint32_t node, const std::string& name) {
  std::vector<std::pair<std::string_view, std::uint32_t>> items;
  const std::vector<std::uint32_t> c = t.children(node);
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i + 1 < c.size(); i += 2) {
    const Node& k = t.nodes[c[i]];
    if (k.kind != Kind::str)
      fail(file, shown(name) + ": a key is " + msgpack_tree::kind_name(k.kind) + ", not a string");
    const std::string_view key = t.text(k);
    if (key.empty()) fail(file, shown(name) + ": an empty key");
    if (key.find('/') != std::string_view::npos)
      fail(file, join(name, key) + ": the key holds '/', which wavg uses to join key paths");
    if (!seen.insert(key).second) fail(file, join(name, key) + ": the key appears twice");
    items.emplace_back(key, c[i + 1]);
  }
  return items;
}

struct Array {
  TensorInfo info;
  std::uint64_t at = 0;
};

// Parses the payload of an ndarray extension: [shape, dtype name, data].
Array parse_array(const std::string& file, const msgpack_tree::Tree& outer, const Node& ext, const std::string& name) {
  const msgpack_tree::Tree t = msgpack_tree::parse(file, outer.base, ext.at, ext.size, name + ": the array encoding");
  const Node& root = t.nodes[0];
  if (root.kind != Kind::array || root.count != 3)
    fail(file, name + ": the array encoding is not [shape, dtype, data]");
  const std::vector<std::uint32_t> parts = t.children(0);
  const Node& shape = t.nodes[parts[0]];
  const Node& dtype = t.nodes[parts[1]];
  const Node& data = t.nodes[parts[2]];
  if (shape.kind != Kind::array) fail(file, name + ": the shape is " + msgpack_tree::kind_name(shape.kind));
  Array a;
  a.info.name = name;
  for (std::uint32_t d : t.children(parts[0])) {
    const Node& dim = t.nodes[d];
    if (dim.kind != Kind::uint)
      fail(file, name + ": dimension " + std::to_string(a.info.shape.size()) + " is " +
                     (dim.kind == Kind::sint ? "negative" : msgpack_tree::kind_name(dim.kind)));
    a.info.shape.push_back(dim.value.u);
  }
  if (dtype.kind != Kind::str && dtype.kind != Kind::bin)
    fail(file, name + ": the dtype is " + msgpack_tree::kind_name(dtype.kind) + ", not a name");
  const std::string_view dname = t.text(dtype);
  const auto parsed = dtype_from_name(dname);
  if (!parsed || dtype_name(*parsed) != dname) {
    const bool complex = dname.rfind("complex", 0) == 0;
    fail(file, name + ": " +
                   (complex ? "complex arrays (" + clipped(dname, 40) + ") are not supported"
                            : "unknown dtype '" + clipped(dname, 40) + "'"));
  }
  a.info.dtype = *parsed;
  std::uint64_t count = 0;
  if (!checked_count(a.info.shape, dtype_size(a.info.dtype), count))
    fail(file, name + ": shape " + shape_string(a.info.shape) + " overflows");
  if (data.kind != Kind::bin && data.kind != Kind::str)
    fail(file, name + ": the data are " + msgpack_tree::kind_name(data.kind) + ", not bytes");
  if (data.size != count * dtype_size(a.info.dtype))
    fail(file, name + ": holds " + std::to_string(data.size) + " bytes of data; " +
                   std::string(dtype_name(a.info.dtype)) + " " + shape_string(a.info.shape) + " needs " +
                   std::to_string(count * dtype_size(a.info.dtype)));
  a.at = data.at;
  return a;
}

}  // namespace

bool looks_like_flax(const SniffInput& input) {
  const unsigned char* b = input.bytes().data();
  const std::size_t n = input.bytes().size();
  if (n >= 1 && b[0] == 0x80) return n == 1;  // {}: an empty state
  if (n < 2) return false;
  const bool map = (b[0] >= 0x81 && b[0] <= 0x8f) || b[0] == 0xde || b[0] == 0xdf;
  if (!map) return false;
  if (b[0] != 0xde && b[0] != 0xdf) return (b[1] >= 0xa0 && b[1] <= 0xbf) || (b[1] >= 0xd9 && b[1] <= 0xdb);
  return true;  // map 16/32: the key follows the count; a full parse decides
}

// A flax.training TrainState (and the dicts users save in its image) says what its leaves are by its fields:
// `step` its step counter, `params` the weights, `batch_stats` the buffers, `opt_state` the optimizer's (optax's `count` its step
// counter, the rest moments). optax.inject_hyperparams keeps its state as the fields count, hyperparams and
// inner_state: the leaves under `hyperparams` of a node that also holds `inner_state` are hyper-parameters (the
// learning rate of a sweep: averaging two gives a rate no run used). Other trees leave roles to the plan.
void assign_train_state_roles(std::vector<TensorInfo>& tensors) {
  std::set<std::string> injected;  // the nodes with an inner_state field: optax's InjectHyperparamsState
  for (const TensorInfo& t : tensors)
    for (std::size_t at = t.name.find("/inner_state/"); at != std::string::npos;
         at = t.name.find("/inner_state/", at + 1))
      injected.insert(t.name.substr(0, at));
  const auto hyper = [&](const std::string& name) {
    for (std::size_t at = name.find("/hyperparams/"); at != std::string::npos; at = name.find("/hyperparams/", at + 1))
      if (injected.contains(name.substr(0, at))) return true;
    return false;
  };
  for (TensorInfo& t : tensors) {
    const std::string top = t.name.substr(0, t.name.find('/'));
    const std::string leaf = t.name.substr(t.name.rfind('/') + 1);
    if (top == "params")
      t.role = Role::weight;
    else if (top == "batch_stats")
      t.role = Role::buffer;
    else if (t.name == "step")  // TrainState.step, an array when Orbax saved it
      t.role = Role::counter;
    else if (top == "opt_state")
      t.role = leaf == "count" ? Role::counter : hyper(t.name) ? Role::hyper_parameter : Role::optimizer_state;
  }
}

FlaxReader::FlaxReader(std::string path) : MappedPiecesReader(path, FormatId::flax), m_file(std::move(path)) {
  m_tree = msgpack_tree::parse(m_path, m_file.data(), 0, m_file.size(), "the file");
  if (m_tree.nodes[0].kind != Kind::map)
    fail(m_path, "the top level is " + std::string(msgpack_tree::kind_name(m_tree.nodes[0].kind)) +
                     ", not a map of named arrays");
  walk(0, "");
  assign_train_state_roles(m_tensors);
  std::size_t chunked = 0;
  for (const auto& p : m_pieces) chunked += p.size() > 1;
  m_layout = "msgpack state dict";
  if (chunked) m_layout += ", " + std::to_string(chunked) + " chunked array(s)";
}

void FlaxReader::walk(std::uint32_t node, const std::string& name) {
  const Node& n = m_tree.nodes[node];
  if (n.kind == Kind::map) {
    const auto items = map_items(m_path, m_tree, node, name);
    const bool chunked =
        std::any_of(items.begin(), items.end(), [](const auto& i) { return i.first == k_chunked_key; });
    if (chunked) return add_chunked(node, name);
    for (const auto& [key, value] : items) walk(value, join(name, key));
  } else if (n.kind == Kind::array) {
    std::size_t i = 0;
    for (std::uint32_t c : m_tree.children(node)) walk(c, join(name, std::to_string(i++)));
  } else if (n.kind == Kind::ext && (n.ext_type == k_ext_ndarray || n.ext_type == k_ext_scalar)) {
    add_array(node, name);
  } else {
    m_kept.push_back(name + " (" + describe(m_tree, n) + ")");
  }
}

void FlaxReader::add_array(std::uint32_t node, const std::string& name) {
  const Node& n = m_tree.nodes[node];
  Array a = parse_array(m_path, m_tree, n, name);
  if (n.ext_type == k_ext_scalar && !a.info.shape.empty())
    fail(m_path, name + ": a numpy scalar of shape " + shape_string(a.info.shape));
  m_pieces.push_back({{a.at, 0, a.info.count()}});
  m_tensors.push_back(std::move(a.info));
  m_nodes.push_back(node);
}

void FlaxReader::add_chunked(std::uint32_t node, const std::string& name) {
  const auto items = map_items(m_path, m_tree, node, name);
  std::uint32_t flag = 0, shape = 0, chunks = 0;
  for (const auto& [key, value] : items) {
    if (key == k_chunked_key)
      flag = value;
    else if (key == "shape")
      shape = value;
    else if (key == "chunks")
      chunks = value;
    else
      fail(m_path, name + ": a chunked array with the unexpected key '" + std::string(key) + "'");
  }
  const auto indexed = [&](std::uint32_t map, const char* what) {
    if (!map || m_tree.nodes[map].kind != Kind::map) fail(m_path, name + ": a chunked array without a map of " + what);
    const auto entries = map_items(m_path, m_tree, map, name + "/" + what);
    for (std::size_t i = 0; i < entries.size(); ++i)
      if (entries[i].first != std::to_string(i))
        fail(m_path, name + "/" + what + ": key '" + std::string(entries[i].first) + "' where '" + std::to_string(i) +
                         "' belongs");
    return entries;
  };
  const Node& f = m_tree.nodes[flag];
  if (f.kind != Kind::boolean || !f.value.b) fail(m_path, name + ": " + std::string(k_chunked_key) + " is not true");
  TensorInfo info{name, DType::f32, {}};
  for (const auto& [key, value] : indexed(shape, "shape")) {
    const Node& d = m_tree.nodes[value];
    if (d.kind != Kind::uint) fail(m_path, name + "/shape/" + std::string(key) + ": not a dimension");
    info.shape.push_back(d.value.u);
  }
  std::vector<FlaxPiece> pieces;
  std::uint64_t total = 0;
  for (const auto& [key, value] : indexed(chunks, "chunks")) {
    const Node& c = m_tree.nodes[value];
    const std::string chunk = name + "/chunks/" + std::string(key);
    if (c.kind != Kind::ext || c.ext_type != k_ext_ndarray) fail(m_path, chunk + ": not an array");
    const Array a = parse_array(m_path, m_tree, c, chunk);
    if (a.info.shape.size() != 1) fail(m_path, chunk + ": a chunk of shape " + shape_string(a.info.shape));
    if (!pieces.empty() && a.info.dtype != info.dtype)
      fail(m_path, chunk + ": " + std::string(dtype_name(a.info.dtype)) + " after " +
                       std::string(dtype_name(info.dtype)) + " chunks");
    info.dtype = a.info.dtype;
    pieces.push_back({a.at, total, a.info.shape[0]});
    total += a.info.shape[0];  // no overflow: each chunk's bytes lie in the file
  }
  std::uint64_t count = 0;
  if (pieces.empty()) fail(m_path, name + ": a chunked array without chunks");
  if (!checked_count(info.shape, dtype_size(info.dtype), count) || count != total)
    fail(m_path, name + ": the chunks hold " + std::to_string(total) + " elements; shape " + shape_string(info.shape) +
                     " needs " + (count == total ? "more" : std::to_string(count)));
  m_pieces.push_back(std::move(pieces));
  m_tensors.push_back(std::move(info));
  m_nodes.push_back(node);
}

void FlaxReader::pieces(std::size_t index, std::uint64_t offset, std::uint64_t count, const PieceFn& f) const {
  WAVG_ASSERT(index < m_tensors.size() && offset + count <= m_tensors[index].count());
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  // msgpack puts data wherever the headers end: a piece's data may lie at any offset.
  for (const FlaxPiece& p : m_pieces[index]) {
    const std::uint64_t lo = std::max(offset, p.first), hi = std::min(offset + count, p.first + p.count);
    if (lo < hi && !f({&m_file, p.at + (lo - p.first) * elem, lo - offset, hi - lo})) return;
  }
}

}  // namespace wavg
