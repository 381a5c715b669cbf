#include "wavg/diff.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "wavg/element_math.hpp"
#include "wavg/error.hpp"

namespace wavg {

void DistanceSums::add(const DistanceSums& o) {
  diff_sq += o.diff_sq;
  a_sq += o.a_sq;
  b_sq += o.b_sq;
  dot += o.dot;
  max_abs = std::isnan(max_abs) || std::isnan(o.max_abs) ? std::numeric_limits<double>::quiet_NaN()
                                                         : std::max(max_abs, o.max_abs);
  values += o.values;
}

double DistanceSums::l2() const { return std::sqrt(diff_sq); }

double DistanceSums::relative() const {
  if (a_sq == 0) return diff_sq == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(diff_sq) / std::sqrt(a_sq);
}

double DistanceSums::cosine() const {
  if (a_sq == 0 || b_sq == 0) return std::numeric_limits<double>::quiet_NaN();
  return dot / (std::sqrt(a_sq) * std::sqrt(b_sq));
}

namespace {

template <DType T>
DistanceSums chunk_sums(const void* a, const void* b, std::uint64_t begin, std::uint64_t end) {
  DistanceSums s;
  for (std::uint64_t i = begin; i < end; ++i) {
    const double x = load<T>(a, i), y = load<T>(b, i);
    const double d = x - y;
    s.diff_sq += d * d;
    s.a_sq += x * x;
    s.b_sq += y * y;
    s.dot += x * y;
    const double ad = std::fabs(d);
    if (std::isnan(ad) || std::isnan(s.max_abs))
      s.max_abs = std::numeric_limits<double>::quiet_NaN();
    else
      s.max_abs = std::max(s.max_abs, ad);
  }
  s.values = end - begin;
  return s;
}

// Adds the sums of one block to `into`: chunks of k_reduce_chunk elements computed in parallel, added one by one in
// chunk order. Blocks start at multiples of the chunk, so the tree is the same for any block size and thread count.
template <DType T>
void add_block_sums(DistanceSums& into, const void* a, const void* b, std::uint64_t count) {
  const auto chunks = static_cast<std::int64_t>(reduce_chunks(count));
  std::vector<DistanceSums> parts(static_cast<std::size_t>(chunks));
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const auto begin = static_cast<std::uint64_t>(c) * k_reduce_chunk;
    parts[static_cast<std::size_t>(c)] = chunk_sums<T>(a, b, begin, std::min(count, begin + k_reduce_chunk));
  }
  for (const DistanceSums& p : parts) into.add(p);
}

void add_float_block_sums(DistanceSums& into, DType t, const void* a, const void* b, std::uint64_t count) {
  switch (t) {
    case DType::f16: return add_block_sums<DType::f16>(into, a, b, count);
    case DType::bf16: return add_block_sums<DType::bf16>(into, a, b, count);
    case DType::f32: return add_block_sums<DType::f32>(into, a, b, count);
    case DType::f64: return add_block_sums<DType::f64>(into, a, b, count);
    default: break;
  }
  WAVG_ASSERT(!"add_float_block_sums: not a float dtype");
}

// One input's elements of a block: a view of the file where the reader lends one (given back with release()
// once the block is done, so resident memory stays at a block), else a copy.
class Block {
 public:
  Block(Reader& r, std::size_t index, std::uint64_t offset, std::uint64_t count, std::vector<double>& buffer,
        std::size_t element)
      : m_reader(r), m_index(index), m_offset(offset), m_count(count), m_data(r.view(index, offset, count)) {
    m_viewed = m_data != nullptr;
    if (m_viewed) return;
    buffer.resize((count * element + sizeof(double) - 1) / sizeof(double));
    r.read(index, offset, count, buffer.data());
    m_data = buffer.data();
  }
  ~Block() {
    if (m_viewed) m_reader.release(m_index, m_offset, m_count);
  }
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  const void* data() const { return m_data; }

 private:
  Reader& m_reader;
  std::size_t m_index;
  std::uint64_t m_offset, m_count;
  const void* m_data;
  bool m_viewed = false;
};

}  // namespace

ModelDiff diff_models(const Plan& plan, Reader& a, Reader& b, std::uint64_t block_bytes) {
  ModelDiff out;
  std::vector<double> buf_a, buf_b;
  for (const PlanEntry& e : plan.entries) {
    WAVG_ASSERT(e.source.size() == 2);
    TensorDiff td{e, is_float(e.info.dtype), {}, 0};
    const std::size_t element = dtype_size(e.info.dtype);
    const std::uint64_t step = std::max<std::uint64_t>(1, block_bytes / 2 / element / k_reduce_chunk) * k_reduce_chunk;
    const std::uint64_t total = e.info.count();
    for (std::uint64_t offset = 0; offset < total; offset += step) {
      const std::uint64_t count = std::min(step, total - offset);
      const Block block_a(a, e.source[0], offset, count, buf_a, element);
      const Block block_b(b, e.source[1], offset, count, buf_b, element);
      const void* pa = block_a.data();
      const void* pb = block_b.data();
      if (td.is_float) {
        add_float_block_sums(td.sums, e.info.dtype, pa, pb, count);
      } else {
        const auto* ca = static_cast<const unsigned char*>(pa);
        const auto* cb = static_cast<const unsigned char*>(pb);
        for (std::uint64_t i = 0; i < count; ++i)
          td.differing += std::memcmp(ca + i * element, cb + i * element, element) != 0;
      }
    }
    if (td.is_float) out.total.add(td.sums);
    out.tensors.push_back(std::move(td));
  }
  return out;
}

}  // namespace wavg
