#pragma once
// wavg's own reading of an HDF5 file's structure: its groups, their hard links by name, and where each simple
// dataset's elements lie. The HDF5 reader uses it in place of the library's walk where a file keeps to the subset
// below, and the library for everything else (Hdf5Reader::Walk).
//
// Why hand-written: the HDF5 library spends about 40 us of CPU per dataset it opens or inspects (H5Dopen2 builds
// property lists and a metadata-cache entry for every message; H5Oget_info_by_name2 and H5Literate resolve names
// through the cache), so a file of 100k small datasets took 4.3-4.7 CPU-s to open, where issue 26 asks for under a
// second; no maintained library reads HDF5's structure without it. This reads the same bytes in about 1 us each.
//
// The subset (HDF5 file format specification 3.0, sections II-IV), which is what the HDF5 library writes with its
// default file-creation properties (h5py's and Keras's files, wavg's own):
//
//   superblock v0/v1 at 0, 512, 1024, ...: version 0 or 1, offsets and lengths of 8 bytes, no driver information
//     block, the base address where the signature lies (every address counts from there); the root group's symbol
//     table entry at its end
//   object header v1: version 1, reserved, message count u16, reference count u32, size of the first chunk u32,
//     4 bytes of padding; messages of type u16, size u16, flags u8, 3 reserved bytes, then `size` bytes; a
//     continuation message (0x10: address, length) adds a chunk of further messages
//   a group: a symbol table message (0x11: address of a version 1 B-tree of type 0, address of a local heap).
//     B-tree node: "TREE", type 0, level, entries u16, left and right sibling (each level's nodes linked left to
//     right, checked), then key 0 and (child, key) per entry; children are nodes one level down, or at level 0 symbol
//     nodes: "SNOD", version 1, reserved, symbol count u16, then entries of 40 bytes (name offset in the local heap,
//     object header address, cache type u32 (2: a soft link), reserved u32, 16 bytes of scratch). Local heap: "HEAP",
//     version 0, 3 reserved, data segment size, free list offset, data segment address; a name is a NUL-terminated
//     string in the data segment
//   a dataset: a dataspace message (0x01, version 1 or 2: scalar, simple of rank <= 32, or null), a datatype message
//     (0x03) and a layout message (0x08); it is read here when its type is a little-endian two's-complement or
//     unsigned integer of 1/2/4/8 bytes or an IEEE half/bfloat16/single/double with no padding or offset bits, its
//     layout is version 3 contiguous with an address, and it has no filter pipeline (0x0B) and no external storage
//     (0x07), none of these messages shared
//
// A file outside the subset as a whole (superblock v2/v3, v2 object headers, new-style groups of link messages, an
// object that is neither group nor dataset nor named datatype) is not read here at all: read() returns nullopt. A
// dataset outside it (chunked, compact, filtered, big-endian, a string, an enum, never written) is marked so, and
// the reader opens it through the library by its path. So is anything that looks wrong: a bad signature, an
// address outside the file, a B-tree node or header chunk reached twice, names out of bounds; the library then
// reads the file and reports it in its own words. Damage the library's walk would not notice (Index::Damage: a
// B-tree's sibling links, a compact dataset's size) is refused here instead, so the native walk is never the laxer
// of the two.
//
// Work is linear in the file: the bytes of every header chunk, B-tree node and symbol node read and of every name and
// path made are counted against a budget of a few times the file's size (a node or chunk referenced twice is read
// twice, so a file that reuses them to multiply the work runs out of budget; a valid file reads each once), and an
// object header is read once however many links name it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "wavg/tensor.hpp"

namespace wavg::h5native {

// HDF5's signature, at offset 0 or after a user block (512, 1024, 2048, ... bytes).
inline constexpr char k_signature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};

// The dtype of an HDF5 integer of `bytes` bytes (1, 2, 4 or 8), for the library's types and this parser's alike.
std::optional<DType> integer_dtype(std::size_t bytes, bool is_signed);

// What the reader needs of a dataset to read it straight from the file.
struct Dataset {
  bool known = false;  // within the subset; otherwise only the library may open it
  bool null = false;   // a null dataspace: no values at all
  DType dtype = DType::f32;
  Shape dims;
  std::uint64_t offset = 0;  // where its elements lie, from the start of the file (user block included)
  std::uint64_t stored = 0;  // the bytes its layout says it stores there
};

struct Object {
  enum class Kind { group, dataset, other };
  Kind kind = Kind::other;
  std::uint64_t header = 0;  // the object header's address, from the start of the file
  Dataset dataset;           // for Kind::dataset
};

// A hard link as the library's walk meets it: links of a group by name, a group's contents right after its link;
// a group reached a second time is not walked again.
struct Link {
  std::string path;  // full path without the leading slash
  std::size_t object = 0;
};

class Index {
 public:
  // Damage the library's walk (H5Literate) does not notice but other readers of the file, or of a copy of it, do:
  // a group B-tree whose nodes' sibling links disagree with the tree; a compact dataset whose stored bytes are not
  // what its shape and type need (which HDF5 1.10 reads past). `what` says where.
  struct Damage {
    std::string what;
  };

  // Reads the structure of the file whose bytes are [data, data + size); nullopt when the file is outside the
  // subset or anything about it looks wrong. Throws Damage (above).
  static std::optional<Index> read(const unsigned char* data, std::uint64_t size);

  const std::vector<Link>& links() const { return m_links; }
  const Object& object(std::size_t i) const { return m_objects[i]; }
  // The object the path of hard links `path` names, or nullptr (a soft link on the way, no such name).
  const Object* find(const std::string& path) const;

  // A metadata byte range [begin, end) of the file: the superblock, an object header chunk, a B-tree node, a symbol
  // node or a local heap. A dataset's elements must lie elsewhere.
  enum class Kind { superblock, header, btree, symbols, heap };
  struct Span {
    std::uint64_t begin = 0, end = 0;
    Kind kind = Kind::header;
    std::size_t link = k_root;  // the link it was first reached by (its object's, or its group's), or k_root
  };
  static constexpr std::size_t k_root = ~std::size_t{0};
  const std::vector<Span>& metadata() const { return m_metadata; }
  // What a span is, in words: "the object header of ", "the B-tree of group ", ... (the path follows).
  static const char* what(Kind kind);

 private:
  struct Reader;
  std::vector<Object> m_objects;
  std::vector<Link> m_links;
  mutable std::unordered_map<std::string_view, std::size_t> m_paths;  // every link's path -> object, made by find()
  std::vector<Span> m_metadata;
};

}  // namespace wavg::h5native
