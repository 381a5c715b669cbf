// wavg's own reading of an HDF5 file's structure (native_index.hpp has the layout and why).

#include "hdf5/native_index.hpp"

#include <algorithm>
#include <cstring>

#include "common/byte_cursor.hpp"

namespace wavg::h5native {

namespace {

// Thrown for anything outside the subset or looking wrong; read() turns it into nullopt.
struct Outside {};

[[noreturn]] void outside() { throw Outside{}; }
[[noreturn]] void overrun(const ByteCursor&, std::uint64_t, const std::string&) { throw Outside{}; }

const std::string k_no_file;  // the cursors never name a file: an overrun is Outside, not an Error

constexpr std::uint64_t k_undefined = ~std::uint64_t{0};
constexpr int k_max_depth = 256;  // as the library's walk (tree_walk.cpp)
constexpr std::size_t k_max_rank = 32;
constexpr std::uint64_t k_entry_bytes = 40;  // a symbol table entry with offsets and lengths of 8 bytes

enum Message : std::uint16_t {
  k_dataspace = 0x01,
  k_link_info = 0x02,
  k_datatype = 0x03,
  k_old_fill = 0x04,
  k_new_fill = 0x05,
  k_link = 0x06,
  k_external = 0x07,
  k_layout = 0x08,
  k_group_info = 0x0A,
  k_filters = 0x0B,
  k_attribute = 0x0C,
  k_continuation = 0x10,
  k_symbol_table = 0x11,
  k_last_known = 0x18,  // the largest type the specification defines (version 3.0)
};
constexpr std::uint8_t k_shared = 0x02;  // message flag: the message lives elsewhere (a committed datatype, ...)

struct Bytes {
  const unsigned char* data = nullptr;
  std::uint64_t size = 0;
};

ByteCursor cursor(const Bytes& b) { return ByteCursor(k_no_file, b.data, b.size, 0, {}, overrun); }

// What an object header holds, as far as this parser cares.
struct Header {
  std::optional<Bytes> dataspace, datatype, layout, symbol_table;
  bool shared = false;  // a message stored elsewhere (a committed datatype, a shared fill value, ...)
  bool filters = false, external = false;
  bool odd = false;  // a fill value message this parser cannot vouch for: the library opens the dataset
};

// Tells whether a fill value message (old 0x04 or new 0x05) reads as the library decodes it.
bool fill_reads(std::uint16_t type, const Bytes& message) {
  ByteCursor c = cursor(message);
  const auto value = [&] {
    const auto size = c.take<std::uint32_t>();
    return size <= c.left();
  };
  if (type == k_old_fill) return value();
  const auto version = c.take<std::uint8_t>();
  if (version == 1 || version == 2) {
    c.skip(2);
    const bool defined = c.take<std::uint8_t>() != 0;
    return (version == 2 && !defined) || value();
  }
  if (version != 3) return false;
  const auto flags = c.take<std::uint8_t>();
  return (flags & 0xc0) == 0 && (!(flags & 0x20) || value());
}

// Tells whether message flags are ones the library accepts on a message of `type` (its object header checks): a
// message of a class that is never shared may be neither shared nor shareable.
bool flags_read(std::uint16_t type, std::uint8_t flags) {
  constexpr std::uint8_t k_dont_share = 0x04, k_fail_for_write = 0x08, k_mark = 0x10, k_was_unknown = 0x20;
  if ((flags & k_shared) && (flags & k_dont_share)) return false;
  if ((flags & k_was_unknown) && ((flags & k_fail_for_write) || !(flags & k_mark))) return false;
  const bool shareable =
      type == k_dataspace || type == k_datatype || type == k_new_fill || type == k_filters || type == k_attribute;
  constexpr std::uint8_t k_shareable = 0x40;
  return shareable || !(flags & (k_shared | k_shareable));
}

// The element type of a datatype message when it is one a dataset may be read straight from the file as.
std::optional<DType> simple_type(const Bytes& message) {
  ByteCursor c = cursor(message);
  const auto class_version = c.take<std::uint8_t>();
  const unsigned version = class_version >> 4, type_class = class_version & 0x0f;
  const auto bits0 = c.take<std::uint8_t>(), bits1 = c.take<std::uint8_t>();
  c.skip(1);
  const auto size = c.take<std::uint32_t>();
  if (version < 1 || version > 3) return std::nullopt;
  if (type_class == 0) {  // integer: little-endian, no padding, every bit of its size
    const auto offset = c.take<std::uint16_t>(), precision = c.take<std::uint16_t>();
    if ((bits0 & 0x07) != 0 || offset != 0 || precision != size * 8) return std::nullopt;
    return integer_dtype(size, bits0 & 0x08);
  }
  if (type_class == 1) {  // floating point: little-endian, no padding, implied mantissa bit, IEEE fields
    const auto offset = c.take<std::uint16_t>(), precision = c.take<std::uint16_t>();
    const auto epos = c.take<std::uint8_t>(), esize = c.take<std::uint8_t>();
    const auto mpos = c.take<std::uint8_t>(), msize = c.take<std::uint8_t>();
    const auto ebias = c.take<std::uint32_t>();
    if ((bits0 & 0x4f) != 0 || ((bits0 >> 4) & 0x03) != 2 || bits1 != size * 8 - 1 || offset != 0 ||
        precision != size * 8 || mpos != 0 || epos != msize || esize == 0 || esize > 11 ||
        ebias != (1u << (esize - 1)) - 1)
      return std::nullopt;
    if (size == 2 && esize == 5 && msize == 10) return DType::f16;
    if (size == 2 && esize == 8 && msize == 7) return DType::bf16;
    if (size == 4 && esize == 8 && msize == 23) return DType::f32;
    if (size == 8 && esize == 11 && msize == 52) return DType::f64;
  }
  return std::nullopt;
}

// Reads a dataspace message into `d` (dims, null); false when it is one this parser does not read.
bool read_dataspace(const Bytes& message, Dataset& d) {
  ByteCursor c = cursor(message);
  const auto version = c.take<std::uint8_t>();
  const auto rank = c.take<std::uint8_t>();
  const auto flags = c.take<std::uint8_t>();
  if (rank > k_max_rank || (flags & ~1u) != 0) return false;  // 2: a permutation, never written
  if (version == 1) {
    c.skip(5);
  } else if (version == 2) {
    const auto type = c.take<std::uint8_t>();
    if (type > 2 || (type != 1 && rank != 0)) return false;
    d.null = type == 2;
  } else {
    return false;
  }
  d.dims.resize(rank);
  for (std::uint64_t& n : d.dims) n = c.take<std::uint64_t>();
  return true;
}

}  // namespace

std::optional<DType> integer_dtype(std::size_t bytes, bool is_signed) {
  switch (bytes) {
    case 1: return is_signed ? DType::i8 : DType::u8;
    case 2: return is_signed ? DType::i16 : DType::u16;
    case 4: return is_signed ? DType::i32 : DType::u32;
    case 8: return is_signed ? DType::i64 : DType::u64;
    default: return std::nullopt;
  }
}

struct Index::Reader {
  Reader(const unsigned char* d, std::uint64_t n, Index& o)
      : data(d), size(n), out(o), budget(4 * n + (16u << 20)), allocated(n) {
    objects.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(n / 1024, 1u << 20)));
  }

  const unsigned char* data;
  std::uint64_t size;
  Index& out;
  std::uint64_t budget;     // bytes of nodes, chunks, names and paths still allowed
  std::uint64_t base = 0;   // where the superblock lies: every address counts from here
  std::uint64_t allocated;  // the bytes from `base` that addresses may reach (the library's end of allocation)
  std::uint64_t leaf_k = 0, internal_k = 0;
  std::unordered_map<std::uint64_t, std::size_t> objects;  // header address -> object

  // The `length` bytes at file address `address`, which must lie inside the file; they count against the budget.
  Bytes at(std::uint64_t address, std::uint64_t length) {
    if (address > allocated || length > allocated - address) outside();
    const std::uint64_t begin = base + address;
    spend(std::max<std::uint64_t>(length, 16));
    return {data + begin, length};
  }
  void note(std::uint64_t address, std::uint64_t length, Kind kind, std::size_t link) {
    out.m_metadata.push_back({base + address, base + address + length, kind, link});
  }
  void spend(std::uint64_t bytes) {
    if (bytes > budget) outside();
    budget -= bytes;
  }

  // Per level of the B-tree being walked, the last node met and its right sibling (see btree()).
  struct Sibling {
    std::uint64_t address = k_undefined, right = k_undefined;
  };
  std::vector<Sibling> siblings;
  // H5Literate (the library's walk) never follows the sibling links, but H5Ovisit and h5py's visit do, and refuse
  // the file: so a damaged link is an error here, not a file handed to the library.
  [[noreturn]] void damaged_siblings(std::size_t link) const {
    throw Damage{"the B-tree of group " + (link == k_root ? std::string("/") : out.m_links[link].path) +
                 " links its nodes wrongly (a damaged sibling address)"};
  }

  void superblock(std::uint64_t at_byte);
  Header header(std::uint64_t address, std::size_t link);
  std::size_t object(std::uint64_t address, std::size_t link, std::optional<Header>& fresh);
  using Entries = std::vector<std::pair<std::string_view, std::uint64_t>>;  // name, object header address
  void group(const Header& h, const std::string& prefix, std::size_t link, int depth);
  Bytes heap(std::uint64_t address, std::size_t link);
  std::string_view name_at(const Bytes& heap, std::uint64_t offset);
  void btree(std::uint64_t address, int level, const Bytes& heap, std::optional<std::string_view> low,
             std::optional<std::string_view> high, std::size_t link, Entries& entries);
  void symbols(std::uint64_t address, const Bytes& heap, std::string_view low, std::string_view high, std::size_t link,
               Entries& entries);
};

void Index::Reader::superblock(std::uint64_t at_byte) {
  base = at_byte;
  allocated = size - base;
  ByteCursor c = cursor(at(0, std::min<std::uint64_t>(size - base, 100)));
  c.skip(8);
  const auto version = c.take<std::uint8_t>();
  if (version > 1 || c.take<std::uint8_t>() != 0 || c.take<std::uint8_t>() != 0) outside();
  c.skip(1);
  if (c.take<std::uint8_t>() != 0 || c.take<std::uint8_t>() != 8 || c.take<std::uint8_t>() != 8) outside();
  c.skip(1);
  leaf_k = c.take<std::uint16_t>();
  internal_k = c.take<std::uint16_t>();
  c.skip(4);  // consistency flags
  if (version == 1) c.skip(4);
  // Addresses count from the base address, which the library writes as where the superblock lies (a user block's
  // size); where a file says otherwise the library moves its end of allocation, and the library walks it. Nothing
  // is read at or past the end of file address (the file's absolute size when written; HDF5 has checked it against
  // the real size before this runs): "address of object past end of allocation".
  const auto base_address = c.take<std::uint64_t>();
  c.skip(8);  // the free-space information, never used by the library
  const auto end_of_file = c.take<std::uint64_t>();
  const auto driver = c.take<std::uint64_t>();
  if (leaf_k == 0 || internal_k == 0 || base_address != base || driver != k_undefined || end_of_file < base ||
      end_of_file > size)
    outside();
  allocated = end_of_file - base;
  c.skip(8);  // the root's link name offset
  const auto root = c.take<std::uint64_t>();
  c.skip(24);  // cache type, reserved, scratch pad (a copy of the root's symbol table message)
  note(0, c.at(), Kind::superblock, k_root);
  std::optional<Header> h;
  const std::size_t r = object(root, k_root, h);
  if (out.m_objects[r].kind != Object::Kind::group) outside();
  group(*h, "", k_root, 0);
}

// Reads the version 1 object header at `address`, noting its chunks as the object's that `link` names.
Header Index::Reader::header(std::uint64_t address, std::size_t link) {
  ByteCursor prefix = cursor(at(address, 16));
  if (prefix.take<std::uint8_t>() != 1) outside();
  prefix.skip(1);
  const auto messages = prefix.take<std::uint16_t>();
  prefix.skip(4);
  const auto first_size = prefix.take<std::uint32_t>();
  Header h;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> chunks{{address + 16, first_size}};
  note(address, 16 + std::uint64_t{first_size}, Kind::header, link);
  std::size_t seen = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    if (chunks[i].second % 8 != 0) outside();  // v1 chunks hold whole 8-byte-aligned messages
    ByteCursor c = cursor(at(chunks[i].first, chunks[i].second));
    while (c.left() > 0) {
      const auto type = c.take<std::uint16_t>(), length = c.take<std::uint16_t>();
      const auto flags = c.take<std::uint8_t>();
      c.skip(3);
      c.need(length);
      const Bytes body{c.here(), length};
      c.skip(length);
      if (length % 8 != 0 || ++seen > messages || !flags_read(type, flags)) outside();
      std::optional<Bytes>* slot = type == k_dataspace      ? &h.dataspace
                                   : type == k_datatype     ? &h.datatype
                                   : type == k_layout       ? &h.layout
                                   : type == k_symbol_table ? &h.symbol_table
                                                            : nullptr;
      if (slot) {
        if (*slot || ((flags & k_shared) && type == k_symbol_table)) outside();  // one of each
        *slot = body;
      } else if (type == k_continuation) {
        ByteCursor m = cursor(body);
        const auto where = m.take<std::uint64_t>(), length_of = m.take<std::uint64_t>();
        chunks.emplace_back(where, length_of);
        note(where, length_of, Kind::header, link);
      } else if (type == k_link_info || type == k_link || type == k_group_info || type > k_last_known) {
        outside();  // a new-style group, or a message this parser does not know
      }
      h.shared = h.shared || (flags & k_shared);
      h.odd = h.odd || ((type == k_old_fill || type == k_new_fill) && !fill_reads(type, body));
      h.filters = h.filters || type == k_filters;
      h.external = h.external || type == k_external;
    }
  }
  if (seen != messages) outside();
  return h;
}

// Returns the object whose header lies at `address`, reading the header the first time (into `fresh`; it stays
// empty when the object was met before).
std::size_t Index::Reader::object(std::uint64_t address, std::size_t link, std::optional<Header>& fresh) {
  if (const auto it = objects.find(address); it != objects.end()) return it->second;
  const Header& h = fresh.emplace(header(address, link));
  Object o;
  o.header = base + address;
  if (h.symbol_table) {
    o.kind = Object::Kind::group;
  } else if (h.datatype && h.dataspace) {
    o.kind = Object::Kind::dataset;
    Dataset& d = o.dataset;
    const std::optional<DType> dtype = h.shared ? std::nullopt : simple_type(*h.datatype);
    if (dtype && h.layout && !h.filters && !h.external && !h.odd && read_dataspace(*h.dataspace, d)) {
      ByteCursor c = cursor(*h.layout);
      const auto version = c.take<std::uint8_t>(), layout_class = c.take<std::uint8_t>();
      std::uint64_t count = 0;
      if (version == 3 && layout_class == 1 && checked_count(d.dims, dtype_size(*dtype), count)) {
        const auto address_of = c.take<std::uint64_t>();
        d.stored = c.take<std::uint64_t>();
        d.dtype = *dtype;
        // Read from here only what the library's reader would read straight from the file: data inside the file,
        // stored whole; anything else (never written, truncated) the library reads or reports.
        const std::uint64_t bytes = count * dtype_size(*dtype);
        d.known = address_of != k_undefined && address_of <= allocated && d.stored == bytes &&
                  bytes <= allocated - address_of;
        d.offset = d.known ? base + address_of : 0;
      } else if (version == 3 && layout_class == 0 && checked_count(d.dims, dtype_size(*dtype), count)) {
        // Compact: the values lie in the message. HDF5 1.10 copies the bytes the dataspace and type need from a
        // buffer of the size the message gives: from a smaller one it reads past the buffer (other memory, a
        // different value each run, exit 0; or a fault), and HDF5 1.12 refuses the dataset. So does this walk.
        const std::uint64_t compact = c.take<std::uint16_t>(), bytes = d.null ? 0 : count * dtype_size(*dtype);
        if (compact != bytes)
          throw Damage{"dataset " + (link == k_root ? std::string("/") : out.m_links[link].path) + " stores " +
                       std::to_string(compact) +
                       " bytes of compact data where its shape and type need " + std::to_string(bytes)};
      }
    }
  } else if (!h.datatype) {
    outside();  // neither group, dataset nor named datatype: the library says what it is
  }
  out.m_objects.push_back(std::move(o));
  objects.emplace(address, out.m_objects.size() - 1);
  return out.m_objects.size() - 1;
}

// Reads the links of the group whose header is `h` (reached by `link`, its path `prefix` without the last slash).
void Index::Reader::group(const Header& h, const std::string& prefix, std::size_t link, int depth) {
  if (depth > k_max_depth) outside();
  ByteCursor stab = cursor(*h.symbol_table);
  const auto tree = stab.take<std::uint64_t>(), heap_at = stab.take<std::uint64_t>();
  const Bytes names = heap(heap_at, link);
  Entries entries;
  siblings.clear();
  btree(tree, -1, names, {}, {}, link, entries);
  for (const Sibling& last : siblings)
    if (last.address != k_undefined && last.right != k_undefined) damaged_siblings(link);  // a node after the last
  for (const auto& [name, address] : entries) {
    std::string path = prefix;
    path += name;
    spend(path.size());
    const std::size_t child = out.m_links.size();
    out.m_links.push_back({std::move(path), 0});
    std::optional<Header> fresh;
    const std::size_t o = object(address, child, fresh);
    out.m_links[child].object = o;
    if (fresh && out.m_objects[o].kind == Object::Kind::group)
      group(*fresh, out.m_links[child].path + "/", child, depth + 1);
  }
}

// Returns the data segment of the local heap at `address`, its free list checked as the library checks it when it
// loads the heap (a later write to the file would load it).
Bytes Index::Reader::heap(std::uint64_t address, std::size_t link) {
  ByteCursor c = cursor(at(address, 32));
  if (c.text(4) != "HEAP" || c.take<std::uint8_t>() != 0) outside();
  c.skip(3);
  const auto data_size = c.take<std::uint64_t>();
  auto free_block = c.take<std::uint64_t>();
  const auto data_at = c.take<std::uint64_t>();
  const Bytes segment = at(data_at, data_size);
  note(address, 32, Kind::heap, link);
  note(data_at, data_size, Kind::heap, link);
  constexpr std::uint64_t k_no_free_block = 1;  // HDF5's H5HL_FREE_NULL
  // Each free block holds the offset of the next and its own size; a chain longer than the heap has room for
  // blocks is a cycle.
  for (std::uint64_t n = 0; free_block != k_no_free_block; ++n) {
    if (free_block >= data_size || 16 > data_size - free_block || n > data_size / 16) outside();
    ByteCursor b = cursor({segment.data + free_block, 16});
    const auto next = b.take<std::uint64_t>(), length = b.take<std::uint64_t>();
    if (next == 0 || length > data_size - free_block) outside();
    free_block = next;
  }
  return segment;
}

// The NUL-terminated name at `offset` in a group's local heap `heap` (its bytes count against the budget).
std::string_view Index::Reader::name_at(const Bytes& heap, std::uint64_t offset) {
  if (offset >= heap.size) outside();
  const auto* begin = reinterpret_cast<const char*>(heap.data + offset);
  const auto* end = static_cast<const char*>(std::memchr(begin, 0, heap.size - offset));
  if (!end) outside();
  spend(static_cast<std::uint64_t>(end - begin) + 1);
  return {begin, static_cast<std::size_t>(end - begin)};
}

// Collects, in name order, the symbols under the group B-tree node at `address` (at `level`, or any level at the
// root: -1). Every name must lie where the library's lookup by name searches for it: after the node's key to its
// left and up to the key to its right, at every level, `low` and `high` being the tightest of the levels above
// (none at the root).
void Index::Reader::btree(std::uint64_t address, int level, const Bytes& heap, std::optional<std::string_view> low,
                          std::optional<std::string_view> high, std::size_t link, Entries& entries) {
  const std::uint64_t node_size = 24 + (4 * internal_k + 1) * 8;  // 2K children and 2K + 1 keys
  ByteCursor c = cursor(at(address, node_size));
  if (c.text(4) != "TREE" || c.take<std::uint8_t>() != 0) outside();
  const int node_level = c.take<std::uint8_t>();
  const auto used = c.take<std::uint16_t>();
  if ((level >= 0 && node_level != level) || used > 2 * internal_k) outside();
  note(address, node_size, Kind::btree, link);
  // The nodes of each level are linked left to right, the ends undefined; the library follows these links, so a
  // damaged one read here would be copied into an output the library cannot walk. In a walk in key order each node
  // must name the one met before it at its level, and be the one that node named.
  const auto left_sibling = c.take<std::uint64_t>(), right_sibling = c.take<std::uint64_t>();
  if (siblings.size() <= static_cast<std::size_t>(node_level)) siblings.resize(node_level + 1);
  Sibling& last = siblings[static_cast<std::size_t>(node_level)];
  if (left_sibling != last.address || last.right != (last.address == k_undefined ? k_undefined : address))
    damaged_siblings(link);
  last = {address, right_sibling};
  std::string_view left = name_at(heap, c.take<std::uint64_t>());
  for (unsigned i = 0; i < used; ++i) {
    const auto child = c.take<std::uint64_t>();
    const std::string_view right = name_at(heap, c.take<std::uint64_t>());
    if (right < left) outside();
    const std::string_view lo = low && *low > left ? *low : left;
    const std::string_view hi = high && *high < right ? *high : right;
    if (node_level > 0)
      btree(child, node_level - 1, heap, lo, hi, link, entries);
    else
      symbols(child, heap, lo, hi, link, entries);
    left = right;
  }
}

// Collects the symbols of the symbol node at `address`, each name after `low` and up to `high` and the names in
// increasing order (the library's lookup searches them by bisection).
void Index::Reader::symbols(std::uint64_t address, const Bytes& heap, std::string_view low, std::string_view high,
                            std::size_t link, Entries& entries) {
  const std::uint64_t node_size = 8 + 2 * leaf_k * k_entry_bytes;
  ByteCursor c = cursor(at(address, node_size));
  if (c.text(4) != "SNOD" || c.take<std::uint8_t>() != 1) outside();
  c.skip(1);
  const auto count = c.take<std::uint16_t>();
  if (count > 2 * leaf_k) outside();
  note(address, node_size, Kind::symbols, link);
  std::string_view previous = low;
  for (unsigned i = 0; i < count; ++i) {
    const std::string_view name = name_at(heap, c.take<std::uint64_t>());
    const auto header_at = c.take<std::uint64_t>();
    const auto cache = c.take<std::uint32_t>();
    c.skip(20);
    if (name.empty() || name <= previous || name > high || name.find('/') != std::string_view::npos || cache > 2 ||
        name == ".")
      outside();
    previous = name;
    if (cache == 2) continue;  // a soft link: names no object here (the library's walk skips it too)
    if (header_at == k_undefined) outside();
    entries.emplace_back(name, header_at);
  }
}

std::optional<Index> Index::read(const unsigned char* data, std::uint64_t size) {
  Index index;
  Reader r(data, size, index);
  try {
    for (std::uint64_t at = 0; size >= 8 && at <= size - 8; at = at ? at * 2 : 512) {
      if (std::memcmp(data + at, k_signature, 8) != 0) continue;
      r.superblock(at);
      return index;
    }
  } catch (const Outside&) {
  }
  return std::nullopt;
}

const Object* Index::find(const std::string& path) const {
  if (m_paths.empty())
    for (const Link& link : m_links) m_paths.emplace(link.path, link.object);
  const auto it = m_paths.find(path);
  return it == m_paths.end() ? nullptr : &m_objects[it->second];
}

const char* Index::what(Kind kind) {
  switch (kind) {
    case Kind::superblock: return "the superblock";
    case Kind::header: return "the object header of ";
    case Kind::btree: return "the B-tree of group ";
    case Kind::symbols: return "the symbol table of group ";
    case Kind::heap: return "the local heap of group ";
  }
  return "";
}

}  // namespace wavg::h5native
