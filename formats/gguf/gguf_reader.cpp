// The GGUF reader: the header, key/value pairs and tensor infos parsed with every count, length and offset checked
// against the file before use, then values read straight from the mapping (plain types) or decoded block by block.

#include <algorithm>
#include <charconv>
#include <cstring>
#include <set>

#include "common/byte_cursor.hpp"
#include "gguf/gguf.hpp"
#include "gguf/gguf_blocks.hpp"
#include "wavg/error.hpp"

namespace wavg::gguf {

namespace {

// clang-format off
constexpr TypeTraits k_types[] = {
    {GgmlType::f32, "F32", 1, 4, DType::f32, true, 0},   {GgmlType::f16, "F16", 1, 2, DType::f16, true, 1},
    {GgmlType::bf16, "BF16", 1, 2, DType::bf16, true, 32}, {GgmlType::f64, "F64", 1, 8, DType::f64, true},
    {GgmlType::q8_0, "Q8_0", 32, 34, DType::f32, true, 7}, {GgmlType::q4_0, "Q4_0", 32, 18, DType::f32, true, 2},
    {GgmlType::q4_1, "Q4_1", 32, 20, DType::f32, false}, {GgmlType::q5_0, "Q5_0", 32, 22, DType::f32, false},
    {GgmlType::q5_1, "Q5_1", 32, 24, DType::f32, false}, {GgmlType::q2_k, "Q2_K", 256, 84, DType::f32, false},
    {GgmlType::q3_k, "Q3_K", 256, 110, DType::f32, false}, {GgmlType::q4_k, "Q4_K", 256, 144, DType::f32, false},
    {GgmlType::q5_k, "Q5_K", 256, 176, DType::f32, false}, {GgmlType::q6_k, "Q6_K", 256, 210, DType::f32, false},
    {GgmlType::q8_k, "Q8_K", 256, 292, DType::f32, false},
    {GgmlType::i8, "I8", 1, 1, DType::i8, true},         {GgmlType::i16, "I16", 1, 2, DType::i16, true},
    {GgmlType::i32, "I32", 1, 4, DType::i32, true},      {GgmlType::i64, "I64", 1, 8, DType::i64, true},
};
// clang-format on

// The value types' names as `inspect` shows them, indexed by ValueType, and their sizes (0: not fixed).
constexpr const char* k_value_names[] = {"u8",  "i8",  "u16",  "i16",   "u32", "i32", "f32",
                                         "bool", "string", "array", "u64", "i64", "f64"};
constexpr std::uint64_t k_value_sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

// ggml's own limits on dimensions (GGML_MAX_DIMS) and on a tensor name's bytes (GGML_MAX_NAME, with its NUL).
constexpr std::uint32_t k_max_dims = 4;
constexpr std::size_t k_max_name = 63;
// An array's elements shown by `inspect` before it says how many more there are.
constexpr std::uint64_t k_shown_elements = 4;
// The longest text shown of one string value inside an array.
constexpr std::size_t k_shown_chars = 24;

bool is_quantized(const TypeTraits& t) { return t.block > 1; }

template <typename T>
std::string number(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Returns a scalar at `p` of `type` as text.
std::string scalar_text(ValueType type, const unsigned char* p) {
  switch (type) {
    case ValueType::u8: return number<std::uint8_t>(p);
    case ValueType::i8: return number<std::int8_t>(p);
    case ValueType::u16: return number<std::uint16_t>(p);
    case ValueType::i16: return number<std::int16_t>(p);
    case ValueType::u32: return number<std::uint32_t>(p);
    case ValueType::i32: return number<std::int32_t>(p);
    case ValueType::f32: return number<float>(p);
    case ValueType::boolean: return *p ? "true" : "false";
    case ValueType::u64: return number<std::uint64_t>(p);
    case ValueType::i64: return number<std::int64_t>(p);
    case ValueType::f64: return number<double>(p);
    default: WAVG_ASSERT(!"scalar_text: not a scalar"); return {};
  }
}

// Reads a u64-length string at the cursor, checking the length against what is left.
std::string read_string(ByteCursor& c, const std::string& what) {
  const auto n = c.take<std::uint64_t>(what + " length");
  if (n > c.left())
    fail(c.file(), what + " at byte " + std::to_string(c.at() - 8) + " is " + std::to_string(n) +
                       " bytes long, past the end of the file (" + std::to_string(c.left()) + " bytes left)");
  return c.text(n, what);
}

ValueType read_value_type(ByteCursor& c, const std::string& key, const char* what) {
  const auto t = c.take<std::uint32_t>(key + ": value type");
  if (t > static_cast<std::uint32_t>(ValueType::f64))
    fail(c.file(), "key " + key + ": unknown " + what + " " + std::to_string(t));
  return static_cast<ValueType>(t);
}

// Reads the value of `key` (of `type`, already read) and returns its text for metadata(): a string itself, any
// other value "TYPE VALUE", an array "array of N TYPE" with its first elements.
std::string read_value(ByteCursor& c, const std::string& key, ValueType type) {
  const auto index = static_cast<std::size_t>(type);
  if (type == ValueType::string) return read_string(c, "key " + key + ": string");
  if (type != ValueType::array) {
    c.need(k_value_sizes[index], "key " + key + ": " + k_value_names[index] + " value");
    std::string text = std::string(k_value_names[index]) + ' ' + scalar_text(type, c.here());
    c.skip(k_value_sizes[index]);
    return text;
  }
  const ValueType elem = read_value_type(c, key, "array element type");
  if (elem == ValueType::array) fail(c.file(), "key " + key + ": an array of arrays, which GGUF readers refuse");
  const auto n = c.take<std::uint64_t>("key " + key + ": array length");
  const std::uint64_t least = elem == ValueType::string ? 8 : k_value_sizes[static_cast<std::size_t>(elem)];
  if (n > c.left() / least)
    fail(c.file(), "key " + key + ": array of " + std::to_string(n) + " " + k_value_names[static_cast<std::size_t>(elem)] +
                       " runs past the end of the file (" + std::to_string(c.left()) + " bytes left)");
  std::string text = "array of " + std::to_string(n) + " " + k_value_names[static_cast<std::size_t>(elem)];
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string v;
    if (elem == ValueType::string) {
      v = read_string(c, "key " + key + ": string " + std::to_string(i));
      if (v.size() > k_shown_chars) v = v.substr(0, k_shown_chars) + "...";
    } else if (i < k_shown_elements) {
      v = scalar_text(elem, c.here());
      c.skip(least);
    } else {
      c.skip((n - i) * least);  // checked above: n x least bytes are left
      i = n;
    }
    if (i < k_shown_elements) text += (i == 0 ? ": " : ", ") + v;
  }
  if (n > k_shown_elements) text += ", ...";
  return text;
}

}  // namespace

const TypeTraits* type_traits(std::uint32_t value) {
  for (const TypeTraits& t : k_types)
    if (static_cast<std::uint32_t>(t.type) == value) return &t;
  return nullptr;
}

const TypeTraits& type_traits(GgmlType type) {
  const TypeTraits* t = type_traits(static_cast<std::uint32_t>(type));
  WAVG_ASSERT(t);
  return *t;
}

const TypeTraits* type_by_name(std::string_view name) {
  for (const TypeTraits& t : k_types) {
    const std::string_view n = t.name;
    if (n.size() == name.size() &&
        std::equal(n.begin(), n.end(), name.begin(), [](char a, char b) { return a == std::toupper(b); }))
      return &t;
  }
  return nullptr;
}

bool looks_like_gguf(const SniffInput& input) { return input.text(4) == "GGUF"; }

GgufReader::GgufReader(std::string file) : ListedReader(file, FormatId::gguf), m_file(file) {
  ByteCursor c(path(), m_file.data(), m_file.size(), 0, "GGUF header");
  c.skip(4, "GGUF magic");
  m_version = c.take<std::uint32_t>("GGUF version");
  if (m_version == 1)
    fail(path(), "GGUF version 1 (32-bit counts, before August 2023) is not read; wavg reads versions 2 and 3");
  if (m_version != 2 && m_version != 3)
    fail(path(), "GGUF version " + std::to_string(m_version) + " is not known; wavg reads versions 2 and 3");
  const auto n_tensors = c.take<std::uint64_t>("tensor count");
  const auto n_kv = c.take<std::uint64_t>("key/value count");
  // Each pair takes at least its key's length and a type (12 bytes), each tensor info 28 bytes: counts that the
  // file cannot hold are refused before anything is reserved for them.
  if (n_kv > c.left() / 12)
    fail(path(), "GGUF key/value count " + std::to_string(n_kv) + " is more than the file can hold");
  if (n_tensors > c.left() / 28)
    fail(path(), "GGUF tensor count " + std::to_string(n_tensors) + " is more than the file can hold");

  std::set<std::string> keys;
  for (std::uint64_t i = 0; i < n_kv; ++i) {
    const std::string key = read_string(c, "key " + std::to_string(i));
    if (!keys.insert(key).second) fail(path(), "GGUF key " + key + " appears twice");
    const std::uint64_t start = c.at();
    const ValueType type = read_value_type(c, key, "value type");
    std::string shown = read_value(c, key, type);
    if (key == "general.alignment") {
      std::uint32_t a = 0;
      if (type != ValueType::u32) fail(path(), "general.alignment is a " + shown.substr(0, shown.find(' ')) + ", not a u32");
      std::memcpy(&a, m_file.data() + c.at() - 4, 4);
      if (a == 0 || (a & (a - 1)) != 0) fail(path(), "general.alignment " + std::to_string(a) + " is not a power of two");
      m_alignment = a;
    }
    m_metadata[key] = shown;
    m_kv.push_back({key, type, std::string(reinterpret_cast<const char*>(m_file.data() + start), c.at() - start),
                    std::move(shown)});
  }
  std::uint64_t at = c.at();
  parse_tensors(m_file.data(), at, n_tensors);
}

void GgufReader::parse_tensors(const unsigned char* data, std::uint64_t& at, std::uint64_t n_tensors) {
  ByteCursor c(path(), data, m_file.size(), at, "GGUF tensor info");
  struct Raw {
    const TypeTraits* type;
    std::uint64_t offset;
  };
  std::vector<Raw> raws;
  std::set<std::string> names;
  for (std::uint64_t i = 0; i < n_tensors; ++i) {
    std::string name = read_string(c, "tensor " + std::to_string(i) + " name");
    if (name.size() > k_max_name)
      fail(path(), "tensor " + std::to_string(i) + "'s name is " + std::to_string(name.size()) +
                       " bytes long; llama.cpp refuses names over " + std::to_string(k_max_name));
    if (!names.insert(name).second) fail(path(), "tensor " + name + " appears twice");
    const auto n_dims = c.take<std::uint32_t>(name + ": dimension count");
    if (n_dims == 0 || n_dims > k_max_dims)
      fail(path(), name + ": " + std::to_string(n_dims) + " dimensions (GGUF tensors have 1 to 4)");
    Shape ne(n_dims);
    for (auto& d : ne) d = c.take<std::uint64_t>(name + ": dimensions");
    const auto type_value = c.take<std::uint32_t>(name + ": type");
    const TypeTraits* type = type_traits(type_value);
    if (!type) fail(path(), name + ": ggml type " + std::to_string(type_value) + " is not one wavg reads");
    const auto offset = c.take<std::uint64_t>(name + ": offset");
    Shape shape(ne.rbegin(), ne.rend());
    std::uint64_t count = 0;
    if (!checked_count(shape, 8, count)) fail(path(), name + ": shape " + shape_string(shape) + " overflows");
    if (ne[0] % type->block != 0)
      fail(path(), name + ": rows of " + std::to_string(ne[0]) + " elements are not whole " + type->name +
                       " blocks of " + std::to_string(type->block));
    if (offset % m_alignment != 0)
      fail(path(), name + ": offset " + std::to_string(offset) + " is not a multiple of the alignment (" +
                       std::to_string(m_alignment) + ")");
    TensorInfo info{std::move(name), type->shown, std::move(shape)};
    if (is_float(info.dtype)) info.role = Role::weight;  // a GGUF file holds a model's weights, nothing else
    if (is_quantized(*type)) info.stored_as = type->name;
    m_tensors.push_back(std::move(info));
    m_types.push_back(type->type);
    raws.push_back({type, offset});
  }
  // The data section starts at the next multiple of the alignment; every tensor must lie inside it.
  const std::uint64_t end = c.at();
  const std::uint64_t data_start = end + (m_alignment - end % m_alignment) % m_alignment;
  if (data_start > m_file.size())
    fail(path(), "GGUF data section starts at byte " + std::to_string(data_start) + ", past the end of the file (" +
                     std::to_string(m_file.size()) + " bytes)");
  const std::uint64_t data_size = m_file.size() - data_start;
  // As in llama.cpp's loader, tensors lie in the order of their infos, each padded to the alignment: two that
  // overlap (one file's bytes read as two tensors) or leave gaps are refused.
  std::uint64_t expected = 0;
  for (std::size_t i = 0; i < raws.size(); ++i) {
    const TensorInfo& t = m_tensors[i];
    const std::uint64_t bytes = t.count() / raws[i].type->block * raws[i].type->bytes;
    if (raws[i].offset > data_size || bytes > data_size - raws[i].offset)
      fail(path(), t.name + ": its " + std::to_string(bytes) + " bytes at offset " + std::to_string(raws[i].offset) +
                       " run past the end of the data section (" + std::to_string(data_size) + " bytes)");
    if (raws[i].offset != expected)
      fail(path(), t.name + ": offset " + std::to_string(raws[i].offset) + " where llama.cpp expects " +
                       std::to_string(expected) + " (tensors lie in order, each padded to the alignment)");
    expected += bytes + (m_alignment - bytes % m_alignment) % m_alignment;  // at most data_size + alignment
    m_at.push_back(data_start + raws[i].offset);
  }
  at = end;
}

std::string GgufReader::layout() const {
  std::string text = "GGUF v" + std::to_string(m_version);
  if (!architecture().empty()) text += ", " + architecture();
  // The stored types and how many tensors each, in the table's order: what `inspect` cannot show in dtype.
  for (const TypeTraits& t : k_types) {
    const auto n = std::count(m_types.begin(), m_types.end(), t.type);
    if (n) text += ", " + std::to_string(n) + " " + t.name;
  }
  return text;
}

std::string GgufReader::architecture() const {
  const auto arch = m_metadata.find("general.architecture");
  return arch == m_metadata.end() ? std::string() : arch->second;
}

std::pair<std::uint64_t, std::uint64_t> GgufReader::block_bytes(std::size_t index, std::uint64_t offset,
                                                                std::uint64_t count) const {
  const TypeTraits& t = type_traits(m_types[index]);
  const std::uint64_t first = offset / t.block, last = (offset + count + t.block - 1) / t.block;
  return {m_at[index] + first * t.bytes, m_at[index] + last * t.bytes};
}

void GgufReader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  const TypeTraits& t = type_traits(m_types[index]);
  if (!is_quantized(t)) {
    std::memcpy(dst, m_file.data() + m_at[index] + offset * t.bytes, count * t.bytes);
    return;
  }
  WAVG_ASSERT(offset + count <= m_tensors[index].count());
  if (count == 0) return;
  const std::uint64_t first = offset / t.block, last = (offset + count + t.block - 1) / t.block;
  const unsigned char* blocks = m_file.data() + m_at[index] + first * t.bytes;
  auto* out = static_cast<float*>(dst);
  if (offset % t.block == 0 && count % t.block == 0) {
    decode_blocks(t, blocks, last - first, out);
    return;
  }
  // A range that starts or ends inside a block: decode the blocks it touches, keep its part.
  std::vector<float> whole((last - first) * t.block);
  decode_blocks(t, blocks, last - first, whole.data());
  std::memcpy(out, whole.data() + (offset - first * t.block), count * sizeof(float));
}

const void* GgufReader::view(std::size_t index, std::uint64_t offset, std::uint64_t /*count*/) {
  const TypeTraits& t = type_traits(m_types[index]);
  return is_quantized(t) ? nullptr : m_file.data() + m_at[index] + offset * t.bytes;
}

void GgufReader::release(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const auto [begin, end] = block_bytes(index, offset, count);
  m_file.release(begin, end);
}

void GgufReader::prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const auto [begin, end] = block_bytes(index, offset, count);
  m_file.prefetch(begin, end);
}

}  // namespace wavg::gguf
