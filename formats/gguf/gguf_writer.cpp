// The GGUF writer. Each tensor's stored type is settled before any input is read (stored_types(), through the
// registry row's output_bytes, which also sizes the free-space check by the real blocks): --out-dtype's block type
// (q8_0, q4_0) or float dtype when given, else input 1's type where wavg writes it (F32, F16, BF16, F64, Q8_0,
// Q4_0 and the integer types), else a refusal naming what is possible. After --out-dtype, general.file_type says
// the new type as llama.cpp's quantizer records it (llama_ftype; dropped for a type it has none for). The file is laid out as llama.cpp's writers do (the
// template's key/value pairs in their order, the provenance after them as strings, tensor infos, each tensor's data
// padded to the alignment), sized once, and written in place: plain values as they come, a quantized tensor's
// values encoded a block at a time, with the few values of a block the engine's block ended inside carried to the
// next write of that tensor.

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>

#include "file_writer.hpp"
#include "gguf/gguf.hpp"
#include "gguf/gguf_blocks.hpp"
#include "wavg/error.hpp"
#include "wavg/file_io.hpp"

namespace wavg::gguf {

namespace {

constexpr std::uint64_t k_default_alignment = 32;

void put_u32(std::string& s, std::uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void put_u64(std::string& s, std::uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
void put_string(std::string& s, const std::string& v) {
  put_u64(s, v.size());
  s += v;
}

// The GGUF type of a plain dtype, or null when GGUF has none (unsigned integers, bool).
const TypeTraits* plain_type(DType d) {
  switch (d) {
    case DType::f32: return &type_traits(GgmlType::f32);
    case DType::f16: return &type_traits(GgmlType::f16);
    case DType::bf16: return &type_traits(GgmlType::bf16);
    case DType::f64: return &type_traits(GgmlType::f64);
    case DType::i8: return &type_traits(GgmlType::i8);
    case DType::i16: return &type_traits(GgmlType::i16);
    case DType::i32: return &type_traits(GgmlType::i32);
    case DType::i64: return &type_traits(GgmlType::i64);
    default: return nullptr;
  }
}

std::string writable_names() {
  return "--out-dtype float32, float16, bfloat16, q8_0 or q4_0";
}

// The key llama.cpp records the file's type under (LLM_KV_GENERAL_FILE_TYPE, a u32 llama_ftype).
constexpr const char* k_file_type = "general.file_type";

// Returns general.file_type's value after --out-dtype: the llama_ftype of the type the matrices are stored as (a
// block type, else the float type every float tensor takes; vectors stay F32 under a block type, as "MOSTLY"
// says), -1 where llama.cpp has none (F64); nothing without --out-dtype, when input 1's types and its value stay.
std::optional<std::int32_t> file_type(const OutputSpec& spec, const std::vector<const TypeTraits*>& types) {
  if (!spec.out_dtype_given) return std::nullopt;
  if (!spec.block_type.empty()) return type_by_name(spec.block_type)->ftype;
  for (std::size_t i = 0; i < types.size(); ++i)
    if (is_float(spec.tensors[i].dtype)) return types[i]->ftype;
  return std::nullopt;  // no float tensor: nothing the type names changed
}

std::uint64_t padded(std::uint64_t n, std::uint64_t alignment) { return n + (alignment - n % alignment) % alignment; }

std::uint64_t tensor_bytes(const TensorInfo& t, const TypeTraits& type) { return t.count() / type.block * type.bytes; }

class GgufWriter final : public FileWriter {
 public:
  GgufWriter(const std::string& tmp_path, const std::string& display_path, const OutputSpec& spec)
      : FileWriter(display_path, spec), m_template(dynamic_cast<const GgufReader*>(spec.template_input)) {
    if (m_template) m_alignment = m_template->alignment();
    m_types = stored_types(spec, display_path);
    m_ftype = file_type(spec, m_types);
    std::uint64_t at = 0;
    for (std::size_t i = 0; i < spec.tensors.size(); ++i) {
      m_offset.push_back(at);
      at += padded(tensor_bytes(spec.tensors[i], *m_types[i]));
    }
    m_data_start = padded(header(spec.provenance.layout_entries()).size());
    open_output(tmp_path, O_WRONLY);
    size_output(m_data_start + at);
    for (std::uint64_t o : m_offset) m_data_at.push_back(m_data_start + o);
  }

  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    const TypeTraits& t = *m_types[index];
    if (t.block == 1) return FileWriter::write(index, offset, count, src);
    const auto* values = static_cast<const float*>(src);
    Carry& carry = m_carry[index];
    WAVG_ASSERT(offset == carry.next);  // the engine writes a tensor's blocks in order
    carry.next = offset + count;
    std::uint64_t from = 0;
    if (!carry.values.empty()) {  // complete the block the last write ended inside
      const std::uint64_t take = std::min<std::uint64_t>(count, t.block - carry.values.size());
      carry.values.insert(carry.values.end(), values, values + take);
      from = take;
      if (carry.values.size() < t.block) return;
      encode(index, offset - (carry.values.size() - take), carry.values.data(), 1);
      carry.values.clear();
    }
    const std::uint64_t whole = (count - from) / t.block;
    if (whole) encode(index, offset + from, values + from, whole);
    from += whole * t.block;
    carry.values.assign(values + from, values + count);
  }

  void finish() override {
    for (const auto& [index, carry] : m_carry) WAVG_ASSERT(carry.values.empty());  // rows are whole blocks
    const std::string text = header(m_spec.provenance.entries());
    if (padded(text.size()) != m_data_start) fail(m_display, "the header changed length after the data was written");
    pwrite_all(m_fd, text.data(), text.size(), 0, m_display);
    FileWriter::finish();
  }

 private:
  struct Carry {
    std::uint64_t next = 0;     // the element the tensor's next write starts at
    std::vector<float> values;  // the values of the block it ended inside
  };

  std::uint64_t padded(std::uint64_t n) const { return gguf::padded(n, m_alignment); }

  // Encodes `n_blocks` blocks of tensor `index` from its element `first` and writes them in place.
  void encode(std::size_t index, std::uint64_t first, const float* values, std::uint64_t n_blocks) {
    const TypeTraits& t = *m_types[index];
    m_encoded.resize(n_blocks * t.bytes);
    encode_blocks(t, values, n_blocks, m_encoded.data());
    pwrite_all(m_fd, m_encoded.data(), m_encoded.size(), m_data_at[index] + first / t.block * t.bytes, m_display);
  }

  // The header and tensor infos, up to (not including) the padding before the data.
  std::string header(const std::map<std::string, std::string>& provenance) const {
    std::string kv;
    std::uint64_t n_kv = 0;
    const auto own = [&](const std::string& key) { return provenance.count(key) || m_spec.metadata.count(key); };
    bool typed = false;  // general.file_type written
    const auto put_file_type = [&] {
      typed = true;
      if (*m_ftype < 0) return;
      put_string(kv, k_file_type);
      put_u32(kv, static_cast<std::uint32_t>(ValueType::u32));
      put_u32(kv, static_cast<std::uint32_t>(*m_ftype));
      ++n_kv;
    };
    if (m_template)
      for (const KeyValue& p : m_template->key_values()) {
        if (own(p.key)) continue;
        if (p.key == k_file_type && m_ftype) {  // in its place, as llama-quantize rewrites it
          put_file_type();
          continue;
        }
        put_string(kv, p.key);
        kv += p.value_bytes;
        ++n_kv;
      }
    if (m_ftype && !typed) put_file_type();
    std::map<std::string, std::string> strings = m_spec.metadata;
    for (const auto& [k, v] : provenance) strings[k] = v;
    for (const auto& [k, v] : strings) {
      put_string(kv, k);
      put_u32(kv, static_cast<std::uint32_t>(ValueType::string));
      put_string(kv, v);
      ++n_kv;
    }
    std::string text = "GGUF";
    put_u32(text, 3);
    put_u64(text, m_spec.tensors.size());
    put_u64(text, n_kv);
    text += kv;
    for (std::size_t i = 0; i < m_spec.tensors.size(); ++i) {
      const TensorInfo& t = m_spec.tensors[i];
      put_string(text, t.name);
      // GGUF lists ne[0] (the contiguous axis) first; a scalar is one element of one dimension.
      put_u32(text, static_cast<std::uint32_t>(std::max<std::size_t>(1, t.shape.size())));
      if (t.shape.empty()) put_u64(text, 1);
      for (auto d = t.shape.rbegin(); d != t.shape.rend(); ++d) put_u64(text, *d);
      put_u32(text, static_cast<std::uint32_t>(m_types[i]->type));
      put_u64(text, m_offset[i]);
    }
    return text;
  }

  const GgufReader* m_template;
  std::uint64_t m_alignment = k_default_alignment;
  std::vector<const TypeTraits*> m_types;  // per tensor, its stored type
  std::optional<std::int32_t> m_ftype;     // general.file_type's new value (-1: drop the key), after --out-dtype
  std::vector<std::uint64_t> m_offset;     // per tensor, its data's offset in the data section
  std::uint64_t m_data_start = 0;
  std::unordered_map<std::size_t, Carry> m_carry;
  std::vector<unsigned char> m_encoded;
};

}  // namespace

std::vector<const TypeTraits*> stored_types(const OutputSpec& spec, const std::string& display) {
  const auto* templ = dynamic_cast<const GgufReader*>(spec.template_input);
  std::unordered_map<std::string_view, std::size_t> in_template;
  if (templ)
    for (std::size_t k = 0; k < templ->tensors().size(); ++k) in_template.emplace(templ->tensors()[k].name, k);
  const TypeTraits* block = spec.block_type.empty() ? nullptr : type_by_name(spec.block_type);
  std::map<std::string, std::size_t> unwritable;
  std::vector<const TypeTraits*> types;
  for (const TensorInfo& t : spec.tensors) {
    const TypeTraits* plain = plain_type(t.dtype);
    if (!plain) fail(display, t.name + ": GGUF has no type for " + std::string(dtype_name(t.dtype)));
    if (t.shape.size() > 4)
      fail(display, t.name + ": " + std::to_string(t.shape.size()) + " dimensions; GGUF holds at most 4");
    const auto found = in_template.find(t.name);
    const TypeTraits* kept = found == in_template.end() ? nullptr : &type_traits(templ->stored_type(found->second));
    const TypeTraits* chosen = plain;
    if (is_float(t.dtype) && block) {
      // As llama.cpp's quantizer: a vector (a norm, a bias) or rows that are not whole blocks stay float32.
      if (t.shape.size() >= 2 && t.shape.back() % block->block == 0) chosen = block;
    } else if (is_float(t.dtype) && !spec.out_dtype_given && kept && kept->shown == t.dtype) {
      chosen = kept;
      if (!kept->writable) ++unwritable[kept->name];
    }
    types.push_back(chosen);
  }
  if (!unwritable.empty()) {
    std::string list;
    for (const auto& [name, n] : unwritable) list += (list.empty() ? "" : ", ") + std::to_string(n) + " " + name;
    fail(display, "input 1 stores tensors as types wavg does not write (" + list + "); give " + writable_names());
  }
  return types;
}

std::uint64_t output_bytes(const OutputSpec& spec, const std::string& display) {
  const auto* templ = dynamic_cast<const GgufReader*>(spec.template_input);
  const std::uint64_t alignment = templ ? templ->alignment() : k_default_alignment;
  const std::vector<const TypeTraits*> types = stored_types(spec, display);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < types.size(); ++i) {
    const std::uint64_t bytes = padded(tensor_bytes(spec.tensors[i], *types[i]), alignment);
    sum = bytes > UINT64_MAX - sum ? UINT64_MAX : sum + bytes;
  }
  return sum;
}

std::unique_ptr<Writer> create_gguf_writer(const std::string& tmp_path, const std::string& display_path,
                                           const OutputSpec& spec) {
  return std::make_unique<GgufWriter>(tmp_path, display_path, spec);
}

}  // namespace wavg::gguf
