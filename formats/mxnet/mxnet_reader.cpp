// The MXNet NDArray list reader (layout in mxnet.hpp): one pass over the mapping with a cursor that checks every
// length against the bytes left, then the names.

#include <bit>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>

#include "common/byte_cursor.hpp"
#include "mxnet/mxnet.hpp"
#include "wavg/error.hpp"

namespace wavg {

static_assert(std::endian::native == std::endian::little, "MXNet files are little-endian");

namespace {

constexpr std::uint64_t k_list_magic = 0x112;
constexpr std::uint32_t k_v1_magic = 0xF993FAC8;
constexpr std::uint32_t k_v2_magic = 0xF993FAC9;
constexpr std::uint32_t k_v3_magic = 0xF993FACA;
// More dimensions than any real array has: a legacy first word above it is no dimension count but garbage.
constexpr std::uint32_t k_max_legacy_ndim = 32;

enum class Encoding { v3, v2, v1, legacy };

const char* encoding_name(Encoding e) {
  switch (e) {
    case Encoding::v3: return "V3";
    case Encoding::v2: return "V2";
    case Encoding::v1: return "V1";
    case Encoding::legacy: return "legacy";
  }
  return "";
}

// mshadow's TypeFlag, by value.
std::optional<DType> dtype_from_flag(std::int32_t flag) {
  constexpr DType k_flags[] = {DType::f32,     DType::f64, DType::f16, DType::u8,  DType::i32, DType::i8,  DType::i64,
                               DType::boolean, DType::i16, DType::u16, DType::u32, DType::u64, DType::bf16};
  if (flag < 0 || flag >= static_cast<std::int32_t>(std::size(k_flags))) return std::nullopt;
  return k_flags[flag];
}

std::string hex32(std::uint32_t v) {
  char s[16];
  std::snprintf(s, sizeof s, "0x%08X", v);
  return s;
}

struct Parsed {
  Encoding encoding;
  TensorInfo info;
  std::uint64_t data = 0;
};

// Reads one array in any of the four encodings; `what` names it ("array 3") in messages.
Parsed parse_array(ByteCursor& c, const std::string& file, const std::string& what) {
  const auto first = c.take<std::uint32_t>(what + " header");
  Parsed p{Encoding::legacy, {what, DType::f32, {}}, 0};
  std::int64_t ndim = 0;
  if (first == k_v3_magic || first == k_v2_magic) {
    p.encoding = first == k_v3_magic ? Encoding::v3 : Encoding::v2;
    const auto stype = c.take<std::int32_t>(what + " storage type");
    if (stype == 1 || stype == 2)
      fail(file, what + ": " + (stype == 1 ? "row_sparse" : "csr") +
                     " storage is not supported (wavg averages dense arrays; save it with .tostype('default'))");
    if (stype != 0) fail(file, what + ": unknown storage type " + std::to_string(stype));
    ndim = c.take<std::int32_t>(what + " dimension count");
  } else if (first == k_v1_magic) {
    p.encoding = Encoding::v1;
    ndim = c.take<std::int32_t>(what + " dimension count");
  } else {
    if (first > k_max_legacy_ndim)
      fail(file, what + ": unknown array encoding (first word " + hex32(first) +
                     " is no array magic and too large for a legacy dimension count)");
    ndim = first;
  }
  // An array saved without a shape ("none") holds no data; V3 marks it -1, where 0 is a scalar.
  const bool none = p.encoding == Encoding::v3 ? ndim == -1 : ndim == 0;
  if (none) fail(file, what + ": holds no array (saved without a shape)");
  if (ndim < 0) fail(file, what + ": negative dimension count " + std::to_string(ndim));
  const std::uint64_t dim_size = p.encoding == Encoding::legacy ? 4 : 8;
  c.need(static_cast<std::uint64_t>(ndim) * dim_size, what + " shape (" + std::to_string(ndim) + " dimensions)");
  for (std::int64_t d = 0; d < ndim; ++d) {
    if (p.encoding == Encoding::legacy) {
      p.info.shape.push_back(c.take<std::uint32_t>(what + " shape"));
      continue;
    }
    const auto v = c.take<std::int64_t>(what + " shape");
    if (v < 0) fail(file, what + ": dimension " + std::to_string(d) + " is " + std::to_string(v) + " (unknown)");
    p.info.shape.push_back(static_cast<std::uint64_t>(v));
  }
  const auto dev_type = c.take<std::int32_t>(what + " device type");
  c.take<std::int32_t>(what + " device id");
  if (dev_type != 1 && dev_type != 2 && dev_type != 3 && dev_type != 5)
    fail(file, what + ": unknown device type " + std::to_string(dev_type));
  const auto flag = c.take<std::int32_t>(what + " dtype");
  const auto dtype = dtype_from_flag(flag);
  if (!dtype) fail(file, what + ": unknown dtype flag " + std::to_string(flag));
  p.info.dtype = *dtype;
  std::uint64_t count = 0;
  if (!checked_count(p.info.shape, dtype_size(p.info.dtype), count))
    fail(file, what + ": shape " + shape_string(p.info.shape) + " overflows");
  p.data = c.at();
  c.skip(count * dtype_size(p.info.dtype),
         what + " data, " + std::string(dtype_name(p.info.dtype)) + " " + shape_string(p.info.shape) + ",");
  return p;
}

// "V2 arrays", "legacy arrays", "V2 and legacy arrays".
std::string encodings_text(const std::set<Encoding>& used) {
  std::string s;
  std::size_t i = 0;
  for (Encoding e : {Encoding::v3, Encoding::v2, Encoding::v1, Encoding::legacy}) {
    if (!used.count(e)) continue;
    if (i++) s += i == used.size() ? " and " : ", ";
    s += encoding_name(e);
  }
  return s.empty() ? "no arrays" : s + " arrays";
}

}  // namespace

bool looks_like_mxnet(const SniffInput& input) {
  std::uint64_t magic = 0;
  if (input.bytes().size() < sizeof magic) return false;
  std::memcpy(&magic, input.bytes().data(), sizeof magic);
  // MXNet itself checks only the magic, not the reserved word.
  return magic == k_list_magic;
}

MxnetReader::MxnetReader(std::string path) : MappedTensorsReader(std::move(path), FormatId::mxnet) {
  const std::string& file = m_file.path();
  ByteCursor c(file, m_file.data(), m_file.size());
  if (c.take<std::uint64_t>("list magic") != k_list_magic) fail(file, "not an MXNet NDArray list (no magic 0x112)");
  c.take<std::uint64_t>("reserved word");
  const auto n = c.take<std::uint64_t>("array count");
  // Every array takes at least 16 bytes (a legacy one-dimensional header, context and dtype).
  if (n > c.left() / 16)
    fail(file,
         "array count " + std::to_string(n) + " is more than the " + std::to_string(c.left()) + " bytes left can hold");
  std::set<Encoding> used;
  for (std::uint64_t i = 0; i < n; ++i) {
    Parsed p = parse_array(c, file, "array " + std::to_string(i));
    used.insert(p.encoding);
    add_tensor(std::move(p.info), p.data);
  }

  const auto k = c.take<std::uint64_t>("name count");
  if (k != 0 && k != n)
    fail(file, "name count " + std::to_string(k) + " is neither 0 nor the array count " + std::to_string(n));
  m_has_names = k != 0;
  std::set<std::string> seen;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string name = std::to_string(i);
    if (m_has_names) {
      const auto len = c.take<std::uint64_t>("length of name " + std::to_string(i));
      name = c.text(len, "name " + std::to_string(i));
      if (name.empty()) fail(file, "array " + std::to_string(i) + " has an empty name");
    }
    if (!seen.insert(name).second) fail(file, "the name " + name + " appears twice");
    // Module checkpoints say what each array is: arg: a parameter, aux: an auxiliary state (batch-norm statistics).
    if (name.rfind("arg:", 0) == 0) m_tensors[i].role = Role::weight;
    if (name.rfind("aux:", 0) == 0) m_tensors[i].role = Role::buffer;
    m_tensors[i].name = std::move(name);
  }
  if (c.left() != 0)
    fail(file, std::to_string(c.left()) + " unexpected bytes after the names (at byte " + std::to_string(c.at()) + ")");

  m_numpy_semantics = used.size() == 1 && *used.begin() == Encoding::v3;
  std::string names = "unnamed";
  if (m_has_names) {
    bool prefixed = n > 0;
    for (const TensorInfo& t : m_tensors)
      prefixed = prefixed && (t.name.rfind("arg:", 0) == 0 || t.name.rfind("aux:", 0) == 0);
    names = prefixed ? "Module arg:/aux: names" : "Gluon names";
  }
  m_layout = "NDArray list, " + encodings_text(used) + ", " + names;
}

}  // namespace wavg
