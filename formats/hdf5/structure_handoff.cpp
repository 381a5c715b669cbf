// The structure probe's answer (structure_probe.hpp): the child that walked the file hands the parent what it
// found, so that the parent does not walk it again. HDF5 spends about 50 us of CPU per dataset it opens (its object
// headers, its metadata cache, its property lists): 100k small datasets cost 5 s a walk, and the parent used to pay
// the child's walk twice over.
//
// The bytes, all integers little-endian u64 unless said, a string being its length and then its bytes:
//
//   "wavgH5S2"                                        magic and version
//   layout string
//   metadata count, then per entry: key string, value string
//   layer order (0 model, 1 per_kind), layer count, then per layer: name string, kind string, sub_objects (0/1),
//     tensor count, tensor indices
//   tensor count, then per tensor: name string, dtype, numbers (0 real, 1 complex), role, role_by_rule (0/1),
//     listed (0/1), rank, dims (a complex tensor's with its parts' 2),
//     direct offset (the file offset of its data, or 2^64 - 1 when it goes through H5Dread)
//
// The parent distrusts the answer as it would a file (the child read hostile bytes): every count is checked
// against what is left, every enum against its range, every index against the tensor count, every direct range
// against the file's size as the parent sees it. What the child checked and the answer cannot break (overlaps of
// data and headers, unwritten datasets, links and external storage) is not checked again. A tensor read through
// H5Dread is opened again here by its path, and its type and shape must be what the child said.

#include <algorithm>
#include <cstring>
#include <string_view>

#include "common/byte_cursor.hpp"
#include "hdf5/hdf5_reader.hpp"
#include "wavg/error.hpp"

namespace wavg {

namespace {

constexpr std::string_view k_magic = "wavgH5S2";
constexpr std::uint64_t k_not_direct = ~std::uint64_t{0};

class Encoder {
 public:
  void u64(std::uint64_t v) {
    char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * i));
    m_out.append(b, 8);
  }
  void str(std::string_view s) {
    u64(s.size());
    m_out.append(s);
  }
  std::string take() { return std::move(m_out); }

 private:
  std::string m_out{k_magic};
};

[[noreturn]] void unreadable(const ByteCursor& c, std::uint64_t, const std::string&) {
  fail(c.file(), "corrupt HDF5 file (the structure probe's answer is unreadable)");
}

// The answer read back through the codecs' bounds-checked cursor; every overrun is the one "unreadable" error.
class Decoder {
 public:
  Decoder(std::string_view bytes, const std::string& file)
      : m_c(file, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), 0, {}, unreadable) {}
  std::uint64_t u64() { return m_c.take<std::uint64_t>(); }
  // A value below `end`.
  std::uint64_t below(std::uint64_t end) {
    const std::uint64_t v = u64();
    if (v >= end) bad();
    return v;
  }
  // A count of items of at least `item_bytes` bytes each, which the rest of the answer must be able to hold.
  std::size_t count(std::size_t item_bytes) {
    const std::uint64_t n = u64();
    if (n > m_c.left() / item_bytes) bad();
    return static_cast<std::size_t>(n);
  }
  std::string str() { return m_c.text(count(1)); }
  void magic() {
    if (m_c.text(k_magic.size()) != k_magic) bad();
  }
  void end() const {
    if (m_c.left() != 0) bad();
  }
  [[noreturn]] void bad() const { unreadable(m_c, 0, {}); }

 private:
  ByteCursor m_c;
};

}  // namespace

std::string Hdf5Reader::structure() const {
  Encoder w;
  w.str(m_layout);
  w.u64(m_metadata.size());
  for (const auto& [key, value] : m_metadata) {
    w.str(key);
    w.str(value);
  }
  w.u64(m_layers.order == LayerOrder::model ? 0 : 1);
  w.u64(m_layers.layers.size());
  for (const LayerInfo& layer : m_layers.layers) {
    w.str(layer.name);
    w.str(layer.kind);
    w.u64(layer.sub_objects);
    w.u64(layer.tensors.size());
    for (std::size_t t : layer.tensors) w.u64(t);
  }
  w.u64(m_tensors.size());
  for (std::size_t i = 0; i < m_tensors.size(); ++i) {
    const TensorInfo& t = m_tensors[i];
    WAVG_ASSERT(t.alias_of.empty());  // HDF5 has no aliases to hand over
    w.str(t.name);
    w.u64(static_cast<std::uint64_t>(t.dtype));
    w.u64(static_cast<std::uint64_t>(t.numbers));
    w.u64(static_cast<std::uint64_t>(t.role));
    w.u64(t.role_by_rule);
    w.u64(m_entries[i].listed);
    w.u64(t.shape.size());
    for (std::uint64_t d : t.shape) w.u64(d);
    const std::int64_t at = m_entries[i].direct_offset;
    w.u64(at < 0 ? k_not_direct : static_cast<std::uint64_t>(at));
  }
  return w.take();
}

void Hdf5Reader::adopt_structure(std::string_view answer) {
  open_file();
  Decoder in(answer, m_path);
  in.magic();
  m_layout = in.str();
  for (std::size_t n = in.count(16); n-- > 0;) {
    std::string key = in.str();
    m_metadata[std::move(key)] = in.str();
  }
  m_layers.order = in.below(2) == 0 ? LayerOrder::model : LayerOrder::per_kind;
  m_layers.layers.resize(in.count(32));
  for (LayerInfo& layer : m_layers.layers) {
    layer.name = in.str();
    layer.kind = in.str();
    layer.sub_objects = in.below(2) == 1;
    layer.tensors.resize(in.count(8));
    for (std::size_t& t : layer.tensors) t = static_cast<std::size_t>(in.u64());  // checked below
  }
  const std::size_t n = in.count(56);
  m_tensors.resize(n);
  m_entries.resize(n);
  for (const LayerInfo& layer : m_layers.layers)
    if (std::any_of(layer.tensors.begin(), layer.tensors.end(), [&](std::size_t t) { return t >= n; })) in.bad();
  for (std::size_t i = 0; i < n; ++i) {
    TensorInfo& t = m_tensors[i];
    Entry& e = m_entries[i];
    t.name = in.str();
    t.dtype = static_cast<DType>(in.below(static_cast<std::uint64_t>(DType::boolean) + 1));
    t.numbers = static_cast<Numbers>(in.below(2));
    if (t.numbers == Numbers::complex && t.dtype != DType::f32 && t.dtype != DType::f64) in.bad();
    t.role = static_cast<Role>(in.below(static_cast<std::uint64_t>(Role::alias)));  // never an alias
    t.role_by_rule = in.below(2) == 1;
    e.listed = in.below(2) == 1;
    t.shape.resize(in.count(8));
    for (std::uint64_t& d : t.shape) d = in.u64();
    if (t.numbers == Numbers::complex && (t.shape.empty() || t.shape.back() != 2)) in.bad();
    std::uint64_t count = 0;
    if (t.name.empty() || !checked_count(t.shape, dtype_size(t.dtype), count)) in.bad();
    const std::uint64_t bytes = count * dtype_size(t.dtype);
    const std::uint64_t at = in.u64();
    if (at == k_not_direct) {
      open_again(i);
    } else {
      if (at > m_file_size || bytes > m_file_size - at || at > static_cast<std::uint64_t>(INT64_MAX)) in.bad();
      e.direct_offset = static_cast<std::int64_t>(at);
    }
  }
  in.end();
  map_file();
}

void Hdf5Reader::open_again(std::size_t index) {
  const TensorInfo& t = m_tensors[index];
  Entry& e = m_entries[index];
  const std::string what = "cannot open dataset " + t.name;
  h5::check_links(m_file.get(), t.name, m_path);
  h5::Handle ds = h5::open_dataset(m_file.get(), t.name, m_path, what);
  h5::Handle type = h5::check(H5Dget_type(ds.get()), H5Tclose, m_path, what);
  h5::Handle space = h5::check(H5Dget_space(ds.get()), H5Sclose, m_path, what);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(rank > 0 && rank <= H5S_MAX_RANK ? static_cast<std::size_t>(rank) : 0);
  if (rank < 0 || rank > H5S_MAX_RANK || (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0))
    fail(m_path, t.name + ": unreadable dataspace");
  const Shape stored = stored_shape(t);
  if (!h5::holds(type.get(), t) || !std::equal(dims.begin(), dims.end(), stored.begin(), stored.end()))
    fail(m_path, t.name + ": changed while wavg read it");
  e.mem_type = h5::memory_type(t, type.get());
  e.dataset = std::move(ds);
  H5Eclear2(H5E_DEFAULT);
}

}  // namespace wavg
