// The `.npy` header (layout in npz.hpp): a strict parser of the small Python dict literal numpy writes, and the
// same header written the way numpy.lib.format writes it.

#include <cstring>
#include <string_view>

#include "npz/npz.hpp"
#include "wavg/error.hpp"

namespace wavg {

namespace {

constexpr char k_magic[] = "\x93NUMPY";
constexpr std::size_t k_magic_size = 6;
constexpr std::uint64_t k_max_header = 1 << 20;  // numpy itself refuses headers over 10000 bytes by default
// numpy.lib.format reads shapes of at most 64 dimensions (NPY_MAXDIMS in numpy 2; 32 before), so a header claiming
// more was not written by numpy: refused before its dimensions are kept or shown.
constexpr std::size_t k_max_dims = 64;

// A cursor over the dict literal; each take_* fails with a message naming what it wanted.
class Literal {
 public:
  Literal(const std::string& file, const std::string& what, std::string_view text)
      : m_file(file), m_what(what), m_text(text) {}

  void spaces() {
    while (m_at < m_text.size() && m_text[m_at] == ' ') ++m_at;
  }
  bool peek(char c) {
    spaces();
    return m_at < m_text.size() && m_text[m_at] == c;
  }
  void expect(char c) {
    if (!peek(c)) bad(std::string("'") + c + "'");
    ++m_at;
  }
  std::string_view string() {
    spaces();
    if (m_at >= m_text.size() || (m_text[m_at] != '\'' && m_text[m_at] != '"')) bad("a quoted string");
    const char q = m_text[m_at++];
    const std::size_t end = m_text.find(q, m_at);
    if (end == std::string_view::npos) bad("the end of a string");
    const std::string_view s = m_text.substr(m_at, end - m_at);
    if (s.find('\\') != std::string_view::npos) bad("a string without escapes");
    m_at = end + 1;
    return s;
  }
  bool boolean() {
    spaces();
    for (const auto& [word, v] : {std::pair{std::string_view("True"), true}, {std::string_view("False"), false}})
      if (m_text.substr(m_at, word.size()) == word) {
        m_at += word.size();
        return v;
      }
    bad("True or False");
  }
  std::uint64_t integer() {
    spaces();
    std::uint64_t v = 0;
    const std::size_t from = m_at;
    for (; m_at < m_text.size() && m_text[m_at] >= '0' && m_text[m_at] <= '9'; ++m_at) {
      const std::uint64_t digit = static_cast<std::uint64_t>(m_text[m_at] - '0');
      if (v > (UINT64_MAX - digit) / 10) fail(m_file, m_what + ": a dimension in the header overflows");
      v = v * 10 + digit;
    }
    if (m_at == from) bad("a non-negative integer");
    return v;
  }
  bool at_end() {
    spaces();
    return m_at == m_text.size();
  }
  [[noreturn]] void bad(const std::string& wanted) const {
    fail(m_file, m_what + ": bad .npy header: expected " + wanted + " at character " + std::to_string(m_at) + " of " +
                     clipped(m_text, 120));
  }

 private:
  const std::string& m_file;
  const std::string& m_what;
  std::string_view m_text;
  std::size_t m_at = 0;
};

// numpy's type strings of the dtypes wavg has ('<f4': kind f, 4 bytes, little-endian; '|' for one byte), read and
// written alike. bfloat16 has none.
struct NpyType {
  char kind;
  std::string_view size;
  DType dtype;
  Numbers numbers = Numbers::real;  // complex ('<c8'): dtype is each part's
};
constexpr NpyType k_npy_types[] = {{'f', "2", DType::f16},
                                   {'f', "4", DType::f32},
                                   {'f', "8", DType::f64},
                                   {'c', "8", DType::f32, Numbers::complex},
                                   {'c', "16", DType::f64, Numbers::complex},
                                   {'i', "1", DType::i8},
                                   {'i', "2", DType::i16},
                                   {'i', "4", DType::i32},
                                   {'i', "8", DType::i64},
                                   {'u', "1", DType::u8},
                                   {'u', "2", DType::u16},
                                   {'u', "4", DType::u32},
                                   {'u', "8", DType::u64},
                                   {'b', "1", DType::boolean}};

// The row of a numpy type string, or a refusal naming what it is ('<c32', numpy's long double complex, among them).
const NpyType& type_of_descr(const std::string& file, const std::string& what, std::string_view d) {
  if (d.size() >= 2) {
    const char order = d[0], kind = d[1];
    const std::string_view size = d.substr(2);
    for (const NpyType& r : k_npy_types)
      if (r.kind == kind && r.size == size) {
        const bool one_byte = r.size == "1";
        if (order == '<' || (one_byte && order == '|')) return r;
        if (order == '>' && !one_byte)
          fail(file, what + ": big-endian data ('" + std::string(d) +
                         "') are not supported; save with "
                         "a.astype(a.dtype.newbyteorder('<'))");
      }
    const char* named = kind == 'O'                  ? "object arrays"
                        : kind == 'c'                ? "complex arrays other than complex64 and complex128"
                        : kind == 'f'                ? "floats other than float16, float32 and float64"
                        : kind == 'V'                ? "void "
                                                       "(raw or ml_dtypes, such as bfloat16) arrays"
                        : kind == 'U' || kind == 'S' ? "string arrays"
                        : kind == 'M' || kind == 'm' ? "datetime arrays"
                                                     : nullptr;
    if (named) fail(file, what + ": " + named + " ('" + std::string(d) + "') are not supported");
  }
  fail(file, what + ": unknown dtype '" + clipped(d, 40) + "'");
}

}  // namespace

std::uint64_t npy_header_length(const std::string& file, const std::string& what, const unsigned char* bytes,
                                std::uint64_t available) {
  if (available < 10 || std::memcmp(bytes, k_magic, k_magic_size) != 0)
    fail(file, what + ": not a .npy array (no NUMPY magic)");
  const unsigned major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    fail(file, what + ": unknown .npy format version " + std::to_string(major) + "." + std::to_string(minor));
  std::uint64_t length = bytes[8] | (std::uint64_t{bytes[9]} << 8);
  std::uint64_t prefix = 10;
  if (major != 1) {
    if (available < 12) fail(file, what + ": truncated .npy header");
    length |= (std::uint64_t{bytes[10]} << 16) | (std::uint64_t{bytes[11]} << 24);
    prefix = 12;
  }
  if (length > k_max_header) fail(file, what + ": a .npy header of " + std::to_string(length) + " bytes");
  if (prefix + length > available)
    fail(file, what + ": the .npy header (" + std::to_string(prefix + length) + " bytes) runs past the member's " +
                   std::to_string(available) + " bytes");
  return prefix + length;
}

NpyHeader parse_npy_header(const std::string& file, const std::string& what, const unsigned char* bytes,
                           std::uint64_t length) {
  const std::uint64_t prefix = bytes[6] == 1 ? 10 : 12;
  std::string_view text(reinterpret_cast<const char*>(bytes + prefix), length - prefix);
  if (text.empty() || text.back() != '\n') fail(file, what + ": the .npy header does not end with a newline");
  text.remove_suffix(1);
  Literal lit(file, what, text);
  NpyHeader h;
  h.data_begin = length;
  bool fortran = false;
  unsigned seen = 0;
  lit.expect('{');
  while (!lit.peek('}')) {
    const std::string_view key = lit.string();
    lit.expect(':');
    unsigned bit = 0;
    if (key == "descr") {
      bit = 1;
      if (lit.peek('[')) fail(file, what + ": structured arrays (a list descr) are not supported");
      const NpyType& type = type_of_descr(file, what, lit.string());
      h.info.dtype = type.dtype;
      h.info.numbers = type.numbers;
    } else if (key == "fortran_order") {
      bit = 2;
      fortran = lit.boolean();
    } else if (key == "shape") {
      bit = 4;
      lit.expect('(');
      bool comma = false;  // (3) is a number in Python, (3,) a tuple
      while (!lit.peek(')')) {
        if (h.info.shape.size() == k_max_dims)
          fail(file, what + ": the .npy header's shape has more than " + std::to_string(k_max_dims) +
                         " dimensions (numpy's limit)");
        h.info.shape.push_back(lit.integer());
        comma = !lit.peek(')');
        if (comma) lit.expect(',');
      }
      if (h.info.shape.size() == 1 && !comma) lit.bad("',' after the one dimension of a tuple");
      lit.expect(')');
    } else {
      fail(file, what + ": unexpected key '" + clipped(key, 40) + "' in the .npy header");
    }
    if (seen & bit) fail(file, what + ": the key '" + clipped(key, 40) + "' appears twice in the .npy header");
    seen |= bit;
    if (!lit.peek('}')) lit.expect(',');
  }
  lit.expect('}');
  if (!lit.at_end()) lit.bad("the end of the header");
  if (seen != 7)
    fail(file, what + ": the .npy header lacks " + (seen & 1 ? seen & 2 ? "shape" : "fortran_order" : "descr"));
  if (fortran && h.info.shape.size() > 1)
    fail(file, what + ": Fortran-ordered arrays are not supported; save np.ascontiguousarray(a)");
  if (h.info.numbers == Numbers::complex) h.info.shape.push_back(2);  // the parts (tensor.hpp)
  std::uint64_t count = 0;
  if (!checked_count(h.info.shape, dtype_size(h.info.dtype), count))
    fail(file, what + ": shape " + shape_string(stored_shape(h.info)) + " overflows");
  return h;
}

std::string npy_header(const TensorInfo& info) {
  std::string descr;
  for (const NpyType& r : k_npy_types)
    if (r.dtype == info.dtype && r.numbers == info.numbers) {
      descr += r.size == "1" ? '|' : '<';
      descr += r.kind;
      descr += r.size;
    }
  WAVG_ASSERT(!descr.empty() && "npy_header: bfloat16 has no numpy dtype");
  const Shape stored = stored_shape(info);
  std::string shape = "(";
  for (std::size_t d = 0; d < stored.size(); ++d) shape += (d ? ", " : "") + std::to_string(stored[d]);
  shape += stored.size() == 1 ? ",)" : ")";
  std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // numpy leaves room to grow the first dimension to 21 digits in place, then pads with spaces to a multiple of 64
  // bytes, counting the magic, version, length and final newline: the same bytes as numpy.save.
  if (!stored.empty()) dict.append(21 - std::to_string(stored[0]).size(), ' ');
  const bool v2 = dict.size() + 11 > 65535;
  const std::size_t prefix = v2 ? 12 : 10;
  dict.append((64 - (prefix + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string h(k_magic, k_magic_size);
  h += static_cast<char>(v2 ? 2 : 1);
  h += '\0';
  for (unsigned i = 0; i < (v2 ? 4u : 2u); ++i) h += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
  return h + dict;
}

}  // namespace wavg
