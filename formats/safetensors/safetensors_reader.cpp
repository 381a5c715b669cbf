#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "json/duplicate_keys.hpp"
#include "safetensors/safetensors.hpp"
#include "wavg/error.hpp"
#include "wavg/utf8.hpp"

namespace wavg {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

namespace {

// The reference implementation's limit (safetensors/src/tensor.rs, MAX_HEADER_SIZE).
constexpr std::uint64_t k_max_header = 100'000'000;

struct DTypeName {
  const char* name;
  std::optional<DType> dtype;  // nullopt: a known safetensors dtype wavg cannot average or copy
};

constexpr DTypeName k_dtypes[] = {
    {"F16", DType::f16},
    {"BF16", DType::bf16},
    {"F32", DType::f32},
    {"F64", DType::f64},
    {"I8", DType::i8},
    {"I16", DType::i16},
    {"I32", DType::i32},
    {"I64", DType::i64},
    {"U8", DType::u8},
    {"U16", DType::u16},
    {"U32", DType::u32},
    {"U64", DType::u64},
    {"BOOL", DType::boolean},
    {"F8_E5M2", {}},
    {"F8_E4M3", {}},
    {"F8_E8M0", {}},
    {"F4", {}},
    {"F6_E2M3", {}},
    {"F6_E3M2", {}},
    {"C64", {}},
};

std::uint64_t read_le64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

std::string safetensors_dtype_name(DType t) {
  for (const auto& d : k_dtypes)
    if (d.dtype == t) return d.name;
  WAVG_ASSERT(!"safetensors_dtype_name: no name");
  return {};
}

bool looks_like_safetensors(const SniffInput& input) {
  const std::uint64_t size = input.bytes().size();
  const unsigned char* buf = input.bytes().data();
  if (size < 9) return false;
  const std::uint64_t n = read_le64(buf);
  // A header that lies about its length is still recognised, so that the reader can say what is wrong.
  return n >= 2 && buf[8] == '{' && (n <= k_max_header || n > size);
}

SafetensorsReader::SafetensorsReader(std::string file) : MappedTensorsReader(std::move(file), FormatId::safetensors) {
  const std::uint64_t size = m_file.size();
  if (size < 8) fail(path(), "truncated safetensors file (" + std::to_string(size) + " bytes, no header length)");
  const std::uint64_t n = read_le64(m_file.data());
  if (n > k_max_header)
    fail(path(), "safetensors header length " + std::to_string(n) + " exceeds the limit of 100000000 bytes");
  if (n > size - 8)
    fail(path(), "safetensors header length " + std::to_string(n) + " runs past the end of the file (" +
                     std::to_string(size) + " bytes)");
  m_data_start = 8 + n;
  parse_header(reinterpret_cast<const char*>(m_file.data() + 8), static_cast<std::size_t>(n));
}

void SafetensorsReader::parse_header(const char* text, std::size_t size) {
  if (!valid_utf8(reinterpret_cast<const unsigned char*>(text), size))
    fail(path(), "safetensors header is not valid UTF-8");
  if (size == 0 || text[0] != '{') fail(path(), "safetensors header does not start with '{'");

  // nlohmann keeps the last of duplicate keys silently; the reference refuses them. A SAX pass finds them (and any
  // syntax error) in linear time; only then is the DOM built, without a callback: nlohmann's callback parser walks
  // the parent object again after every member, which made a header of 60k tensors take 44 s.
  DuplicateKeys sax;
  nlohmann::json::sax_parse(text, text + size, &sax);
  if (!sax.error.empty())
    fail(path(), "safetensors header is not valid JSON (at byte " + std::to_string(8 + sax.error_byte) + ": " +
                     sax.error + ")");
  if (!sax.duplicate.empty()) fail(path(), "safetensors header has the key " + sax.duplicate + " twice");
  if (sax.too_deep) fail(path(), "safetensors header nests deeper than " + std::to_string(DuplicateKeys::k_max_depth) + " levels");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text, text + size);
  } catch (const nlohmann::json::exception& e) {  // the SAX pass saw the same text: not expected
    fail(path(), "safetensors header is not valid JSON");
  }
  if (!header.is_object()) fail(path(), "safetensors header is not a JSON object");

  struct Raw {
    std::string name;
    DType dtype;
    Shape shape;
    std::uint64_t begin, end;
  };
  std::vector<Raw> raws;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::json& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) fail(path(), "safetensors __metadata__ is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string()) fail(path(), "safetensors __metadata__ entry " + m.key() + " is not a string");
        m_metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
      fail(path(), name + ": entry needs dtype, shape and data_offsets");
    const auto& jd = v["dtype"];
    const auto& js = v["shape"];
    const auto& jo = v["data_offsets"];
    if (!jd.is_string()) fail(path(), name + ": dtype is not a string");
    const std::string dname = jd.get<std::string>();
    const DTypeName* known = nullptr;
    for (const auto& d : k_dtypes)
      if (dname == d.name) known = &d;
    if (!known) fail(path(), name + ": unknown safetensors dtype " + dname);
    if (!known->dtype)
      fail(path(), name + ": dtype " + dname + " is not supported (wavg averages F16, BF16, F32 and F64)");
    if (!js.is_array()) fail(path(), name + ": shape is not an array");
    Shape shape;
    for (const auto& d : js) {
      if (!d.is_number_unsigned()) fail(path(), name + ": shape holds something other than a non-negative integer");
      shape.push_back(d.get<std::uint64_t>());
    }
    if (!jo.is_array() || jo.size() != 2 || !jo[0].is_number_unsigned() || !jo[1].is_number_unsigned())
      fail(path(), name + ": data_offsets is not a pair of non-negative integers");
    const auto begin = jo[0].get<std::uint64_t>(), end = jo[1].get<std::uint64_t>();
    raws.push_back({name, *known->dtype, std::move(shape), begin, end});
  }

  // The reference's validate(): sorted by offsets, each tensor exactly where the previous ended, sizes agreeing.
  std::sort(raws.begin(), raws.end(), [](const Raw& a, const Raw& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  const std::uint64_t data_size = m_file.size() - m_data_start;
  std::uint64_t at = 0;
  for (Raw& r : raws) {
    if (r.begin != at)
      fail(path(), r.name + ": data_offsets [" + std::to_string(r.begin) + ", " + std::to_string(r.end) + "] " +
                       (r.begin < at ? "overlap the previous tensor" : "leave a gap after the previous tensor") +
                       " (expected to start at " + std::to_string(at) + ")");
    if (r.end < r.begin) fail(path(), r.name + ": data_offsets end before they begin");
    std::uint64_t count = 0;
    if (!checked_count(r.shape, dtype_size(r.dtype), count))
      fail(path(), r.name + ": shape " + shape_string(r.shape) + " overflows");
    if (r.end - r.begin != count * dtype_size(r.dtype))
      fail(path(), r.name + ": data_offsets span " + std::to_string(r.end - r.begin) + " bytes but shape " +
                       shape_string(r.shape) + " of " + safetensors_dtype_name(r.dtype) + " needs " +
                       std::to_string(count * dtype_size(r.dtype)));
    if (r.end > data_size)
      fail(path(), r.name + ": data_offsets end at " + std::to_string(r.end) + ", past the end of the data (" +
                       std::to_string(data_size) + " bytes)");
    at = r.end;
    add_tensor({std::move(r.name), r.dtype, std::move(r.shape)}, m_data_start + r.begin);
  }
  if (at != data_size)
    fail(path(), "safetensors data section has " + std::to_string(data_size) + " bytes but the tensors use " +
                     std::to_string(at));
}

}  // namespace wavg
