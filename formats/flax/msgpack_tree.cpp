// The msgpack node list (msgpack_tree.hpp): msgpack-c's parser drives a visitor that appends one node per value.
// The parser is iterative (no recursion on nested input) and checks every length against the bytes it was given;
// the visitor adds the limits msgpack-c leaves to its caller (depth, number of values).

#include "flax/msgpack_tree.hpp"

#include <msgpack.hpp>
#include <optional>

#include "wavg/error.hpp"

namespace wavg::msgpack_tree {

namespace {

constexpr std::size_t k_max_depth = 64;
constexpr std::size_t k_max_nodes = std::size_t{1} << 22;

class Builder : public msgpack::null_visitor {
 public:
  Builder(Tree& tree, std::uint64_t begin) : m_tree(tree), m_begin(begin) {}

  bool visit_nil() { return leaf(Kind::nil).has_value(); }
  bool visit_boolean(bool v) {
    return set(leaf(Kind::boolean), [&](Node& n) { n.value.b = v; });
  }
  bool visit_positive_integer(std::uint64_t v) {
    return set(leaf(Kind::uint), [&](Node& n) { n.value.u = v; });
  }
  bool visit_negative_integer(std::int64_t v) {
    return set(leaf(Kind::sint), [&](Node& n) { n.value.i = v; });
  }
  bool visit_float32(float v) {
    return set(leaf(Kind::f32), [&](Node& n) { n.value.d = v; });
  }
  bool visit_float64(double v) {
    return set(leaf(Kind::f64), [&](Node& n) { n.value.d = v; });
  }
  bool visit_str(const char* v, std::uint32_t size) { return payload(Kind::str, v, size); }
  bool visit_bin(const char* v, std::uint32_t size) { return payload(Kind::bin, v, size); }
  bool visit_ext(const char* v, std::uint32_t size) {
    // msgpack-c hands the type byte and the data together; an ext 32 of length 2^32 - 1 wraps its size to 0.
    if (size == 0) return stop("an extension value of 4 GiB or more");
    if (!payload(Kind::ext, v + 1, size - 1)) return false;
    m_tree.nodes.back().ext_type = static_cast<std::int8_t>(*v);
    return true;
  }
  bool start_array(std::uint32_t n) { return open(Kind::array, n); }
  bool end_array() { return close(); }
  bool start_map(std::uint32_t n) { return open(Kind::map, n); }
  bool end_map() { return close(); }
  void parse_error(std::size_t, std::size_t error_offset) {
    m_error = "invalid msgpack at byte " + std::to_string(m_begin + error_offset);
  }
  void insufficient_bytes(std::size_t, std::size_t error_offset) {
    m_error = "truncated: a value runs past the end (whole up to byte " + std::to_string(m_begin + error_offset) + ")";
  }

  const std::string& error() const { return m_error; }

 private:
  std::optional<std::size_t> leaf(Kind kind) {
    if (m_tree.nodes.size() >= k_max_nodes) {
      stop("more than " + std::to_string(k_max_nodes) + " values");
      return std::nullopt;
    }
    Node n;
    n.kind = kind;
    n.end = static_cast<std::uint32_t>(m_tree.nodes.size() + 1);
    m_tree.nodes.push_back(n);
    return m_tree.nodes.size() - 1;
  }
  template <typename F>
  bool set(std::optional<std::size_t> index, F&& f) {
    if (!index) return false;
    f(m_tree.nodes[*index]);
    return true;
  }
  bool payload(Kind kind, const char* v, std::uint32_t size) {
    return set(leaf(kind), [&](Node& n) {
      n.at = static_cast<std::uint64_t>(reinterpret_cast<const unsigned char*>(v) - m_tree.base);
      n.size = size;
    });
  }
  bool open(Kind kind, std::uint32_t count) {
    if (m_open.size() >= k_max_depth) return stop("nesting deeper than " + std::to_string(k_max_depth));
    const auto index = leaf(kind);
    if (!index) return false;
    m_tree.nodes[*index].count = count;
    m_open.push_back(*index);
    return true;
  }
  bool close() {
    m_tree.nodes[m_open.back()].end = static_cast<std::uint32_t>(m_tree.nodes.size());
    m_open.pop_back();
    return true;
  }
  bool stop(const std::string& what) {
    m_error = what;
    return false;
  }

  Tree& m_tree;
  std::uint64_t m_begin;
  std::vector<std::size_t> m_open;  // the containers being filled, outermost first
  std::string m_error;
};

}  // namespace

std::vector<std::uint32_t> Tree::children(std::uint32_t index) const {
  std::vector<std::uint32_t> out;
  const Node& n = nodes[index];
  for (std::uint32_t c = index + 1; c < n.end; c = nodes[c].end) out.push_back(c);
  return out;
}

Tree parse(const std::string& file, const unsigned char* base, std::uint64_t begin, std::uint64_t size,
           const std::string& what) {
  Tree tree;
  tree.base = base;
  Builder builder(tree, begin);
  std::size_t off = 0;
  const char* data = reinterpret_cast<const char*>(base + begin);
  const bool ok = size > 0 && msgpack::parse(data, static_cast<std::size_t>(size), off, builder);
  if (!ok) {
    const std::string why = size == 0 ? "empty" : builder.error().empty() ? "invalid msgpack" : builder.error();
    fail(file, what + ": " + why);
  }
  if (off != size)
    fail(file, what + ": " + std::to_string(size - off) + " unexpected bytes after the msgpack value (at byte " +
                   std::to_string(begin + off) + ")");
  return tree;
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::nil: return "nil";
    case Kind::boolean: return "a boolean";
    case Kind::uint:
    case Kind::sint: return "an integer";
    case Kind::f32:
    case Kind::f64: return "a float";
    case Kind::str: return "a string";
    case Kind::bin: return "binary data";
    case Kind::ext: return "an extension value";
    case Kind::array: return "an array";
    case Kind::map: return "a map";
  }
  return "";
}

}  // namespace wavg::msgpack_tree
