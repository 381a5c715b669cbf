// The MXNet writer (layout in mxnet.hpp): every array header and the names are known from the OutputSpec, so the
// file is laid out and sized once, the headers and names written at once, and every block written in place.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "file_writer.hpp"
#include "mxnet/mxnet.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/error.hpp"
#include "wavg/file_io.hpp"

namespace wavg {

namespace {

constexpr std::uint32_t k_v2_magic = 0xF993FAC9;
constexpr std::uint32_t k_v3_magic = 0xF993FACA;

// mshadow's TypeFlag of a wavg dtype.
std::int32_t dtype_flag(DType t) {
  switch (t) {
    case DType::f32: return 0;
    case DType::f64: return 1;
    case DType::f16: return 2;
    case DType::u8: return 3;
    case DType::i32: return 4;
    case DType::i8: return 5;
    case DType::i64: return 6;
    case DType::boolean: return 7;
    case DType::i16: return 8;
    case DType::u16: return 9;
    case DType::u32: return 10;
    case DType::u64: return 11;
    case DType::bf16: return 12;
  }
  WAVG_ASSERT(!"dtype_flag: unknown dtype");
  return 0;
}

template <typename T>
void put(std::string& out, T v) {
  char b[sizeof v];
  std::memcpy(b, &v, sizeof v);
  out.append(b, sizeof v);
}

// The V2 or V3 header of one dense array on the CPU: magic, storage type, shape, context, dtype.
std::string array_header(const TensorInfo& t, std::uint32_t magic) {
  std::string h;
  put<std::uint32_t>(h, magic);
  put<std::int32_t>(h, 0);
  put<std::int32_t>(h, static_cast<std::int32_t>(t.shape.size()));
  for (std::uint64_t d : t.shape) put<std::int64_t>(h, static_cast<std::int64_t>(d));
  put<std::int32_t>(h, 1);
  put<std::int32_t>(h, 0);
  put<std::int32_t>(h, dtype_flag(t.dtype));
  return h;
}

// Tells whether input 1 was saved in numpy semantics, so that the output is V3 as well.
bool numpy_semantics(const OutputSpec& spec) {
  const auto* in = dynamic_cast<const MxnetReader*>(spec.template_input);
  return in && in->numpy_semantics();
}

// Tells whether the output's names are input 1's indices and input 1 was a plain list, to be written as one again.
bool plain_list(const OutputSpec& spec) {
  const auto* in = dynamic_cast<const MxnetReader*>(spec.template_input);
  if (!in || in->has_names()) return false;
  for (std::size_t i = 0; i < spec.tensors.size(); ++i)
    if (spec.tensors[i].name != std::to_string(i)) return false;
  return true;
}

class MxnetWriter final : public FileWriter {
 public:
  MxnetWriter(const std::string& tmp_path, const std::string& display_path, const OutputSpec& spec)
      : FileWriter(display_path, spec) {
    std::string head;
    put<std::uint64_t>(head, 0x112);
    put<std::uint64_t>(head, 0);
    put<std::uint64_t>(head, spec.tensors.size());
    // Each array's header is written now, in the gap before its data; the data follow from the engine.
    std::vector<std::pair<std::uint64_t, std::string>> headers;
    std::uint64_t at = head.size();
    const bool v3 = numpy_semantics(spec);
    for (const TensorInfo& t : spec.tensors) {
      // V2 (and V1, and legacy) read ndim 0 as "no array"; only V3, which needs numpy semantics to load, has scalars.
      if (t.shape.empty() && !v3)
        fail(display_path, t.name + ": a scalar cannot be stored in MXNet's V2 encoding (ndim 0 means no array)");
      std::string h = array_header(t, v3 ? k_v3_magic : k_v2_magic);
      headers.emplace_back(at, h);
      at += h.size();
      m_data_at.push_back(at);
      at += t.bytes();
    }
    std::string names;
    const bool plain = plain_list(spec);
    put<std::uint64_t>(names, plain ? 0 : spec.tensors.size());
    if (!plain)
      for (const TensorInfo& t : spec.tensors) {
        put<std::uint64_t>(names, t.name.size());
        names += t.name;
      }

    open_output(tmp_path, O_WRONLY);
    size_output(at + names.size());
    pwrite_all(m_fd, head.data(), head.size(), 0, m_display);
    for (const auto& [offset, h] : headers) pwrite_all(m_fd, h.data(), h.size(), offset, m_display);
    pwrite_all(m_fd, names.data(), names.size(), at, m_display);
  }
};

}  // namespace

std::unique_ptr<Writer> create_mxnet_writer(const std::string& tmp_path, const std::string& display_path,
                                            const OutputSpec& spec) {
  return std::make_unique<MxnetWriter>(tmp_path, display_path, spec);
}

}  // namespace wavg
