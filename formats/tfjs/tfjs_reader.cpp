// Reading TensorFlow.js models: model.json parsed whole (it is capped at 256 MiB) and checked member by member
// before any shard byte is read; shards memory-mapped and read through a group-wide byte offset, so a weight that
// spans shards is copied piece by piece (layout in tfjs.hpp).

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>

#include "json/json.hpp"
#include "tfjs/tfjs.hpp"
#include "wavg/error.hpp"

namespace wavg {

static_assert(std::endian::native == std::endian::little, "TF.js weights are little-endian");

bool looks_like_tfjs(const SniffInput& input) {
  if (looks_like_wavg_json(input)) return false;
  // As far as a model.json may be long (the reader refuses a longer one by name).
  const std::string_view text = input.text(static_cast<std::size_t>(k_max_model_json) + (1 << 20));
  const std::size_t start = text.find_first_not_of(" \t\r\n");
  return start != std::string_view::npos && text[start] == '{' &&
         text.find("\"weightsManifest\"") != std::string_view::npos;
}

TfjsReader::TfjsReader(std::string path) : ListedReader(std::move(path), FormatId::tfjs) {
  const std::size_t slash = m_path.rfind('/');
  m_dir = slash == std::string::npos ? "" : m_path.substr(0, slash + 1);
  m_text = read_model_json(m_path);
  parse(m_text);
}

TfjsReader::~TfjsReader() = default;

std::vector<std::string> TfjsReader::files() const {
  std::vector<std::string> out{m_path};
  for (const Group& g : m_groups)
    for (const Shard& s : g.shards) out.push_back(s.file.path());
  return out;
}

std::vector<TfjsReader::Shard>::const_iterator TfjsReader::shard_after(const Group& g, std::uint64_t at) {
  return std::upper_bound(g.shards.begin(), g.shards.end(), at,
                          [](std::uint64_t v, const Shard& s) { return v < s.start; });
}

void TfjsReader::copy_bytes(const Group& g, std::uint64_t at, std::uint64_t n, unsigned char* dst) const {
  // From the last shard starting at or before `at`; empty shards are skipped by the size check.
  auto it = shard_after(g, at);
  WAVG_ASSERT(it != g.shards.begin());
  for (--it; n > 0; ++it) {
    WAVG_ASSERT(it != g.shards.end());
    if (at >= it->start + it->file.size()) continue;
    const std::uint64_t take = std::min(n, it->start + it->file.size() - at);
    std::memcpy(dst, it->file.data() + (at - it->start), take);
    dst += take;
    at += take;
    n -= take;
  }
}

namespace {

// Dequantises q * scale + min in double, rounded once to the weight's type (numpy: astype, or round for int32).
template <typename Q>
void dequantise(const unsigned char* src, std::uint64_t n, double scale, double min, DType to, void* dst) {
  for (std::uint64_t i = 0; i < n; ++i) {
    Q q;
    std::memcpy(&q, src + i * sizeof(Q), sizeof(Q));
    const double v = static_cast<double>(q) * scale + min;
    if (to == DType::i32)
      static_cast<std::int32_t*>(dst)[i] = static_cast<std::int32_t>(std::nearbyint(v));
    else
      static_cast<float*>(dst)[i] = static_cast<float>(v);
  }
}

}  // namespace

void TfjsReader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  WAVG_ASSERT(index < m_tensors.size());
  const TensorInfo& t = m_tensors[index];
  const Weight& w = m_weights[index];
  WAVG_ASSERT(offset + count <= t.count());
  const Group& g = m_groups[w.group];
  if (w.stored == TfjsStored::plain) {
    const std::size_t elem = dtype_size(t.dtype);
    copy_bytes(g, w.start + offset * elem, count * elem, static_cast<unsigned char*>(dst));
    return;
  }
  const std::size_t stored = w.stored == TfjsStored::uint8_affine ? 1 : 2;
  constexpr std::uint64_t k_chunk = 16384;
  unsigned char buf[k_chunk * 2];
  auto* out = static_cast<unsigned char*>(dst);
  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t n = std::min(k_chunk, count - done);
    copy_bytes(g, w.start + (offset + done) * stored, n * stored, buf);
    void* to = out + done * 4;  // float32 and int32 alike
    if (w.stored == TfjsStored::uint8_affine)
      dequantise<std::uint8_t>(buf, n, w.scale, w.min, t.dtype, to);
    else if (w.stored == TfjsStored::uint16_affine)
      dequantise<std::uint16_t>(buf, n, w.scale, w.min, t.dtype, to);
    else
      for (std::uint64_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, buf + i * 2, 2);
        static_cast<float*>(to)[i] = static_cast<float>(half_to_double(h));
      }
    done += n;
  }
}

const void* TfjsReader::view(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  WAVG_ASSERT(index < m_tensors.size());
  const Weight& w = m_weights[index];
  if (w.stored != TfjsStored::plain || count == 0) return nullptr;
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  const std::uint64_t at = w.start + offset * elem, n = count * elem;
  // The last shard starting at or before `at` (an empty one before it holds nothing).
  const auto s = shard_after(m_groups[w.group], at);
  WAVG_ASSERT(s != m_groups[w.group].shards.begin());
  const Shard& in = *(s - 1);
  return at + n <= in.start + in.file.size() ? in.file.data() + (at - in.start) : nullptr;
}

std::vector<std::uint64_t> TfjsReader::boundaries(std::size_t index) const {
  WAVG_ASSERT(index < m_tensors.size());
  const Weight& w = m_weights[index];
  if (w.stored != TfjsStored::plain) return {};
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  const std::uint64_t end = w.start + m_tensors[index].count() * elem;
  std::vector<std::uint64_t> out;
  for (auto s = shard_after(m_groups[w.group], w.start); s != m_groups[w.group].shards.end() && s->start < end; ++s) {
    // An element split between two shards falls in the piece before; the engine copies the chunk around it.
    const std::uint64_t cut = (s->start - w.start) / elem;
    if (cut > 0 && (out.empty() || out.back() != cut)) out.push_back(cut);
  }
  return out;
}

void TfjsReader::for_mapped_ranges(std::size_t index, std::uint64_t offset, std::uint64_t count,
                                   void (MappedFile::*f)(std::uint64_t, std::uint64_t) const) const {
  const Weight& w = m_weights[index];
  const std::uint64_t elem = w.stored == TfjsStored::plain          ? dtype_size(m_tensors[index].dtype)
                             : w.stored == TfjsStored::uint8_affine ? 1
                                                                    : 2;
  const std::uint64_t at = w.start + offset * elem, end = at + count * elem;
  const Group& g = m_groups[w.group];
  auto s = shard_after(g, at);
  for (s = s == g.shards.begin() ? s : s - 1; s != g.shards.end() && s->start < end; ++s) {
    const std::uint64_t b = std::max(at, s->start), e = std::min(end, s->start + s->file.size());
    if (b < e) (s->file.*f)(b - s->start, e - s->start);
  }
}

void TfjsReader::release(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  for_mapped_ranges(index, offset, count, &MappedFile::release);
}

void TfjsReader::prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  for_mapped_ranges(index, offset, count, &MappedFile::prefetch);
}

}  // namespace wavg
