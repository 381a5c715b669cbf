#pragma once
// A msgpack document as a flat list of nodes in document order, parsed by Debian's msgpack-c (its visitor API,
// which walks the bytes without building objects or copying strings): every string, binary and extension payload
// is an offset into the caller's buffer (a memory mapping), so the tree costs a few dozen bytes per value whatever
// the size of the arrays inside. Containers are iterated through `end`, the index one past their last descendant.
// The parse refuses truncation, invalid bytes, trailing bytes, nesting deeper than 64 and more than 2^22 values,
// each as one Error naming the file and the byte.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wavg::msgpack_tree {

enum class Kind : std::uint8_t { nil, boolean, uint, sint, f32, f64, str, bin, ext, array, map };

struct Node {
  Kind kind = Kind::nil;
  std::int8_t ext_type = 0;  // ext: the application type byte
  std::uint32_t count = 0;   // array: items; map: pairs (the children alternate key, value)
  std::uint64_t at = 0;      // str, bin, ext: the payload's offset in the buffer (ext: after the type byte)
  std::uint64_t size = 0;    // str, bin, ext: the payload's length in bytes
  std::uint32_t end = 0;     // index one past this node's last descendant
  union {
    bool b;
    std::uint64_t u;
    std::int64_t i;
    double d;
  } value{};
};

struct Tree {
  const unsigned char* base = nullptr;  // the buffer the offsets refer to
  std::vector<Node> nodes;              // nodes[0] is the root

  // Returns a str or bin node's bytes.
  std::string_view text(const Node& n) const {
    return {reinterpret_cast<const char*>(base + n.at), static_cast<std::size_t>(n.size)};
  }
  // Returns the indices of a container's children (for a map: key, value, key, value, ...).
  std::vector<std::uint32_t> children(std::uint32_t index) const;
};

// Parses the one msgpack value in base[begin, begin + size), which must fill the range exactly. `file` and `what`
// ("the file", "the array encoding of params/w") name it in errors.
Tree parse(const std::string& file, const unsigned char* base, std::uint64_t begin, std::uint64_t size,
           const std::string& what);

// Returns the msgpack type of a node in words ("a string", "an integer", "a map"), for messages.
const char* kind_name(Kind k);

}  // namespace wavg::msgpack_tree
