// The wavg JSON reader: one streaming pass over a memory mapping of the file (see json.hpp for the layout).

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>

#include "json/json.hpp"
#include "json/json_text.hpp"
#include "wavg/error.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg {

namespace {

// Reads one value of the data at `in` into element `e` of type `t`; false when it is no value of that type.
bool read_value(json::Cursor& in, DType t, unsigned char* e) {
  if (t == DType::boolean) {
    e[0] = in.boolean() ? 1 : 0;
    return true;
  }
  const char c = in.peek();
  if (is_float(t))
    return c == '"' ? json::parse_float_string(in.string(), t, e) : json::parse_float_number(in.number(), t, e);
  return c != '"' && json::parse_integer(in.number(), t, e);
}

// Below this much text a data array is read on one thread.
constexpr std::size_t k_parallel_text = std::size_t{1} << 20;

// Reads the values of a data array whose '[' `in` has consumed, side by side on the OpenMP threads, and moves `in`
// past its ']'; false (and `in` unmoved) when the text is not `count` well-formed values, for read_values to find
// and word the error on one thread. The array is cut into pieces after a ',' (never inside a valid value: numbers
// and the strings "NaN", "Infinity", "NaN:0x..." hold none), the values of each piece counted by their commas, so
// every piece knows where its values go, then each piece is parsed into place.
bool read_values_parallel(json::Cursor& in, DType t, std::uint64_t count, unsigned char* out) {
  const char* begin = in.position();
  const auto* close = static_cast<const char*>(std::memchr(begin, ']', static_cast<std::size_t>(in.end() - begin)));
  if (!close || static_cast<std::size_t>(close - begin) < k_parallel_text || count == 0) return false;
  const std::size_t pieces = static_cast<std::size_t>(omp_get_max_threads()) * 8;
  if (pieces < 2) return false;
  std::vector<const char*> cut{begin};
  for (std::size_t j = 1; j < pieces; ++j) {
    const char* from = std::max(cut.back(), begin + static_cast<std::size_t>(close - begin) * j / pieces);
    const auto* comma = static_cast<const char*>(std::memchr(from, ',', static_cast<std::size_t>(close - from)));
    if (!comma) break;
    cut.push_back(comma + 1);
  }
  cut.push_back(close + 1);  // each piece's text ends with its ',' (the last with the ']')
  const std::size_t n = cut.size() - 1;
  std::vector<std::uint64_t> first(n + 1, 0);
  for (std::size_t j = 0; j < n; ++j) {  // counted on one thread: a memchr pass, far quicker than the parse
    const char* last = cut[j + 1] - 1;
    for (const char* p = cut[j];
         (p = static_cast<const char*>(std::memchr(p, ',', static_cast<std::size_t>(last - p)))); ++p)
      ++first[j + 1];
  }
  for (std::size_t j = 0; j < n; ++j) first[j + 1] += first[j] + 1;
  if (first[n] != count) return false;
  const std::size_t elem = dtype_size(t);
  const std::string none;
  bool ok = true;
#pragma omp parallel for schedule(dynamic) reduction(&& : ok)
  for (std::size_t j = 0; j < n; ++j) {
    try {
      json::Cursor piece(cut[j], cut[j + 1] - 1, none);  // without its ',' or ']'
      for (std::uint64_t i = first[j]; i < first[j + 1]; ++i) {
        if (!read_value(piece, t, out + i * elem)) throw std::runtime_error("not a value");
        if (i + 1 < first[j + 1]) piece.expect(',', "','");
      }
      piece.expect_end();
    } catch (const std::exception&) {
      ok = false;
    }
  }
  if (!ok) return false;
  in.jump(close + 1);
  return true;
}

// Reads the "data" value of one tensor into `out`, which holds count x element size bytes.
void read_values(json::Cursor& in, const TensorInfo& t, std::uint64_t count, bool base64,
                 std::vector<unsigned char>& out) {
  const std::size_t elem = dtype_size(t.dtype);
  if (base64) {
    const std::string text = in.string();
    if (!json::decode_base64(text, out.data(), out.size()))
      in.error(t.name + ": base64 data is not " + std::to_string(out.size()) + " bytes of standard base64");
    if (t.dtype == DType::boolean)
      for (unsigned char b : out)
        if (b > 1) in.error(t.name + ": a bool byte is neither 0 nor 1");
    return;
  }
  in.expect('[', "'[' to open the data");
  if (read_values_parallel(in, t.dtype, count, out.data())) return;
  std::uint64_t n = 0;
  auto too_many = [&] {
    in.error(t.name + ": data has more than the " + std::to_string(count) + " values shape " + shape_string(t.shape) +
             " holds");
  };
  if (!in.consume(']')) {
    do {
      if (n == count) too_many();
      if (!read_value(in, t.dtype, out.data() + n * elem))
        in.error(t.name + ": value " + std::to_string(n) + " is not a " + std::string(dtype_name(t.dtype)));
      ++n;
    } while (in.consume(','));
    in.expect(']', "',' or ']' in the data");
  }
  if (n != count)
    in.error(t.name + ": data has " + std::to_string(n) + " values but shape " + shape_string(t.shape) + " holds " +
             std::to_string(count));
}

}  // namespace

bool looks_like_wavg_json(const SniffInput& input) {
  std::string compact;
  for (char c : input.text(255))
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') compact += c;
  return compact.rfind("{\"format\":\"wavg-json\"", 0) == 0;
}

JsonReader::JsonReader(std::string path) : ListedReader(std::move(path), FormatId::json) {
  m_layout = "wavg JSON";
  // Mapped only while parsing: the values are copied into m_data as they are decoded.
  const MappedFile map(m_path);
  map.advise_sequential();
  const auto* text = reinterpret_cast<const char*>(map.data());
  json::Cursor in(text, text + map.size(), m_path);
  std::set<std::string> top_keys, names;
  bool have_format = false, have_tensors = false;
  in.expect('{', "'{' to open the document");
  for (bool first_member = true; in.next_item('}', first_member);) {
    const std::string key = in.key(top_keys, "the member ", " appears twice");
    if (key == "format") {
      if (in.peek() != '"' || in.string() != "wavg-json") in.error("format is not \"wavg-json\"");
      have_format = true;
    } else if (key == "version") {
      if (in.peek() == '"' || in.number() != "1") in.error("unsupported version (wavg reads version 1)");
    } else if (key == "metadata") {
      in.expect('{', "metadata to be an object");
      for (bool first_entry = true; in.next_item('}', first_entry);) {
        std::string k = in.string();
        in.expect(':', "':'");
        if (in.peek() != '"') in.error("metadata entry " + k + " is not a string");
        if (!m_metadata.emplace(k, in.string()).second) in.error("metadata has the key " + k + " twice");
      }
    } else if (key == "tensors") {
      have_tensors = true;
      in.expect('[', "tensors to be an array");
      for (bool first_tensor = true; in.next_item(']', first_tensor);) {
        TensorInfo t;
        bool have_name = false, have_dtype = false, have_shape = false, have_data = false, base64 = false;
        std::set<std::string> keys;
        in.expect('{', "a tensor object");
        for (bool first_field = true; in.next_item('}', first_field);) {
          const std::string k = in.key(keys, "a tensor has the member ", " twice");
          if (k == "name") {
            if (in.peek() != '"') in.error("tensor name is not a string");
            t.name = in.string();
            if (!names.insert(t.name).second) in.error("the tensor " + t.name + " appears twice");
            have_name = true;
          } else if (k == "dtype") {
            if (in.peek() != '"') in.error("dtype is not a string");
            const std::string d = in.string();
            const auto dt = dtype_from_name(d);
            if (!dt || d != dtype_name(*dt)) in.error("unknown dtype " + d);
            t.dtype = *dt;
            have_dtype = true;
          } else if (k == "shape") {
            in.expect('[', "shape to be an array");
            for (bool first_dim = true; in.next_item(']', first_dim);) {
              const std::string_view n = in.number();
              std::uint64_t d = 0;
              if (!json::parse_integer(n, DType::u64, &d)) in.error("shape holds something other than a size");
              t.shape.push_back(d);
            }
            have_shape = true;
          } else if (k == "encoding") {
            if (in.peek() != '"') in.error("encoding is not a string");
            const std::string e = in.string();
            if (e != "base64") in.error("unknown encoding " + e + " (wavg knows base64)");
            base64 = true;
          } else if (k == "data") {
            if (!have_name || !have_dtype || !have_shape)
              in.error("a tensor's data comes before its name, dtype and shape");
            std::uint64_t count = 0;
            if (!checked_count(t.shape, dtype_size(t.dtype), count))
              in.error(t.name + ": shape " + shape_string(t.shape) + " overflows");
            // Each value takes at least one byte of text (and base64 4 bytes per 3): a larger shape is a lie,
            // refused before allocating for it.
            if (count * dtype_size(t.dtype) / (base64 ? 1 : dtype_size(t.dtype)) > in.remaining())
              in.error(t.name + ": shape " + shape_string(t.shape) + " needs more values than the file can hold");
            m_data.emplace_back(count * dtype_size(t.dtype));
            read_values(in, t, count, base64, m_data.back());
            have_data = true;
          } else {
            // Every value in the file is read or refused, never dropped unnoticed (wavg's coverage rule).
            in.error("a tensor has the unexpected member " + k +
                     " (a tensor has name, dtype, shape, encoding and data)");
          }
        }
        if (!have_data) in.error("a tensor has no data (it needs name, dtype, shape and data)");
        m_tensors.push_back(std::move(t));
      }
    } else {
      in.error("unexpected member " + key + " (wavg JSON holds format, version, metadata and tensors)");
    }
  }
  in.expect_end();
  if (!have_format) in.error("no \"format\": \"wavg-json\" member");
  if (!have_tensors) in.error("no tensors member");
}

void JsonReader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  WAVG_ASSERT(index < m_tensors.size() && offset + count <= m_tensors[index].count());
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  if (count) std::memcpy(dst, m_data[index].data() + offset * elem, count * elem);
}

const void* JsonReader::view(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  WAVG_ASSERT(index < m_tensors.size() && offset + count <= m_tensors[index].count());
  return m_data[index].data() + offset * dtype_size(m_tensors[index].dtype);
}

}  // namespace wavg
