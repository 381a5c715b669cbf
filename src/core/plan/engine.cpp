// The streaming engine. For each tensor of the plan it reads the same range of elements from every input into one
// buffer per input, hands the block to the method, and writes the result. Blocks are sized so that the buffers of
// all inputs together stay within a fixed budget (64 MiB by default), whatever the size of the model or of any one
// tensor. Where a reader can, it lends a view of the block straight from its memory-mapped file instead of copying
// it, and the engine gives the view back before the next block, so resident memory stays at one block either way;
// the block after the current one is announced to the readers so a cold file is read from disk meanwhile. Parallelism
// lives inside the backend's kernels and runs over elements, never over inputs, so each element is always summed in the
// same order.
//
// Where an input stores a tensor in pieces (a DCP tensor's shards, one per rank), a block that spans two pieces
// cannot be lent as one view: the reader assembles it into a copy. So blocks also end where the inputs' pieces meet
// (Reader::boundaries), as far as the reductions allow: a method's norms and distances are summed over chunks of
// k_reduce_chunk elements counted from each block's start, so a block may only begin where such a chunk begins in
// the plain layout (blocks of block_elements() from 0). A boundary inside a chunk leaves that chunk as a block of
// its own, copied (at most k_reduce_chunk elements per input), and the blocks on either side are views. Every
// method's result stays the bits of the plain layout, for any thread count.

#include "wavg/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "wavg/dispatch_float.hpp"
#include "wavg/element_math.hpp"
#include "wavg/error.hpp"

namespace wavg {

namespace {

// An input's boundaries are used only when its pieces average this many elements: shorter ones (a column-wise
// shard's rows) would cut the tensor into chunk-sized blocks that are copied all the same.
constexpr std::uint64_t k_min_piece = 8 * k_reduce_chunk;

// Returns the index of the first NaN or infinity among elements [from, count) of `p`, or count. Reads the bits (an
// exponent of all ones), a chunk at a time without a branch: GCC vectorises the integer OR (a bool OR it does not),
// 15.6 GB/s against 2 GB/s on the 2-core VM, so a block is scanned at memory speed.
template <class U>
std::uint64_t first_non_finite_bits(const void* p, std::uint64_t from, std::uint64_t count, U exponent) {
  constexpr std::uint64_t k_chunk = 4096;
  const auto* bytes = static_cast<const unsigned char*>(p);
  const auto at = [&](std::uint64_t i) {
    U v;
    std::memcpy(&v, bytes + i * sizeof(U), sizeof(U));
    return static_cast<U>((v & exponent) == exponent);
  };
  for (std::uint64_t start = from; start < count; start += k_chunk) {
    const std::uint64_t end = std::min(count, start + k_chunk);
    U any = 0;
    for (std::uint64_t i = start; i < end; ++i) any |= at(i);
    if (!any) continue;
    for (std::uint64_t i = start; i < end; ++i)
      if (at(i)) return i;
  }
  return count;
}

std::uint64_t first_non_finite(DType t, const void* p, std::uint64_t from, std::uint64_t count) {
  switch (t) {
    case DType::f16: return first_non_finite_bits<std::uint16_t>(p, from, count, 0x7c00);
    case DType::bf16: return first_non_finite_bits<std::uint16_t>(p, from, count, 0x7f80);
    case DType::f32: return first_non_finite_bits<std::uint32_t>(p, from, count, 0x7f80'0000);
    case DType::f64: return first_non_finite_bits<std::uint64_t>(p, from, count, 0x7ff0'0000'0000'0000);
    default: return count;
  }
}

}  // namespace

std::vector<std::uint64_t> block_ends(std::uint64_t count, std::uint64_t step, std::vector<std::uint64_t> boundaries) {
  WAVG_ASSERT(step > 0);
  std::vector<std::uint64_t> ends;
  for (std::uint64_t end = step; end < count; end += step) ends.push_back(end);
  if (count > 0) ends.push_back(count);
  for (const std::uint64_t b : boundaries) {
    if (b == 0 || b >= count) continue;
    const std::uint64_t start = b / step * step;  // the plain block b falls in
    const std::uint64_t chunk = start + (b - start) / k_reduce_chunk * k_reduce_chunk;
    if (chunk > start) ends.push_back(chunk);
    if (chunk != b) ends.push_back(std::min({chunk + k_reduce_chunk, start + step, count}));
  }
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  return ends;
}

Engine::Engine(const Plan& plan, std::vector<Reader*> inputs, Method& method, Backend& backend,
               std::uint64_t block_bytes)
    : m_plan(plan), m_inputs(std::move(inputs)), m_method(method), m_backend(backend), m_block_bytes(block_bytes) {
  WAVG_ASSERT(!m_inputs.empty());
  m_buffers.resize(m_inputs.size());
  m_pointers.resize(m_inputs.size());
  m_bytes_before.reserve(m_plan.entries.size());
  for (const PlanEntry& e : m_plan.entries) {
    m_bytes_before.push_back(m_total_bytes);
    m_total_bytes += e.info.bytes();
  }
}

std::uint64_t Engine::block_elements(const PlanEntry& entry) const {
  const std::uint64_t per_input = m_block_bytes / m_inputs.size();
  std::uint64_t unit = std::max<std::uint64_t>(1, m_method.block_unit(entry));
  // A complex number's two parts stay in one block: the readers and writers of complex numbers count in them.
  if (unit % parts_per_element(entry.info) != 0) unit *= parts_per_element(entry.info);
  return std::max<std::uint64_t>(1, per_input / dtype_size(entry.info.dtype) / unit) * unit;
}

std::vector<std::uint64_t> Engine::blocks(const PlanEntry& entry) const {
  const std::uint64_t n = entry.info.count();
  std::vector<std::uint64_t> cuts;
  // An entry only input 1 holds (a copied optimizer the others lack) has one source.
  for (std::size_t k = 0; k < entry.source.size(); ++k) {
    const std::vector<std::uint64_t> b = m_inputs[k]->boundaries(entry.source[k]);
    if (b.empty() || n / (b.size() + 1) < k_min_piece) continue;
    cuts.insert(cuts.end(), b.begin(), b.end());
  }
  return block_ends(n, block_elements(entry), std::move(cuts));
}

void Engine::set_share(std::vector<ElementRange> share) {
  WAVG_ASSERT(share.size() == m_plan.entries.size());
  m_share = std::move(share);
}

std::uint64_t Engine::share_cut(std::size_t index, std::uint64_t wanted) const {
  const std::size_t from = m_plan.entries[index].same_as;
  const PlanEntry& entry = m_plan.entries[from == k_no_entry ? index : from];
  const std::uint64_t n = entry.info.count(), step = block_elements(entry);
  const std::uint64_t unit = std::lcm<std::uint64_t>(k_reduce_chunk, std::max<std::uint64_t>(1, m_method.block_unit(entry)));
  if (wanted >= n) return n;
  const std::uint64_t start = wanted / step * step;
  const std::uint64_t at = start + (wanted - start + unit / 2) / unit * unit;
  return std::min({at, start + step, n});
}

Engine::ElementRange Engine::range(std::size_t index, const PlanEntry& entry) const {
  return m_share.empty() ? ElementRange{0, entry.info.count()} : m_share[index];
}

std::vector<std::uint64_t> Engine::blocks(const PlanEntry& entry, ElementRange range) const {
  std::vector<std::uint64_t> ends = blocks(entry);
  if (range.first == 0 && range.second == entry.info.count()) return ends;
  // Both ends are share_cut() places: where a chunk of the plain blocks begins, which block_ends cuts exactly.
  for (const std::uint64_t cut : {range.first, range.second})
    if (cut > 0 && cut < entry.info.count()) ends.push_back(cut);
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  return ends;
}

void Engine::read_block(const PlanEntry& entry, std::uint64_t offset, std::uint64_t count, std::size_t inputs,
                        std::uint64_t until) {
  release_block();
  const std::uint64_t bytes = count * dtype_size(entry.info.dtype);
  const std::size_t words = (bytes + 7) / 8;
  // Ask for the next block first, so the kernel reads it from disk while this one is computed.
  const std::uint64_t next = offset + count, n = std::min(entry.info.count(), until);
  if (next < n)
    for (std::size_t k = 0; k < inputs; ++k)
      m_inputs[k]->prefetch(entry.source[k], next, std::min(block_elements(entry), n - next));
  for (std::size_t k = 0; k < inputs; ++k) {
    if (read_converted(*m_inputs[k], entry.source[k], entry.info.dtype, offset, count, m_buffers[k])) {
      ++m_reads.copied;
      m_pointers[k] = m_buffers[k].data();
      continue;
    }
    if (const void* view = m_inputs[k]->view(entry.source[k], offset, count)) {
      m_pointers[k] = view;
      ++m_reads.lent;
      continue;
    }
    ++m_reads.copied;
    if (m_buffers[k].size() < words) m_buffers[k].resize(words);
    m_inputs[k]->read(entry.source[k], offset, count, m_buffers[k].data());
    m_pointers[k] = m_buffers[k].data();
  }
  m_held = {&entry, offset, count, inputs};
  if (m_total_bytes > 0 && !m_progress.empty()) {
    const auto index = static_cast<std::size_t>(&entry - m_plan.entries.data());
    const std::uint64_t done = m_bytes_before[index] + (offset + count) * dtype_size(entry.info.dtype);
    for (const ProgressFn& fn : m_progress) fn(done, m_total_bytes);
  }
}

void Engine::on_progress(ProgressFn fn) { m_progress.push_back(std::move(fn)); }

void Engine::release_block() {
  if (!m_held.entry) return;
  for (std::size_t k = 0; k < m_held.inputs; ++k)
    m_inputs[k]->release(m_held.entry->source[k], m_held.offset, m_held.count);
  m_held = {};
}

void Engine::set_base(Reader* base, std::vector<std::size_t> source) {
  WAVG_ASSERT(!base || source.size() == m_plan.entries.size());
  m_base = base;
  m_base_source = std::move(source);
}

const void* Engine::read_base(const PlanEntry& entry, std::uint64_t offset, std::uint64_t count) {
  if (!m_base) return nullptr;
  const auto index = static_cast<std::size_t>(&entry - m_plan.entries.data());
  const std::uint64_t bytes = count * dtype_size(entry.info.dtype);
  if (!read_converted(*m_base, m_base_source[index], entry.info.dtype, offset, count, m_base_buffer)) {
    if (m_base_buffer.size() < (bytes + 7) / 8) m_base_buffer.resize((bytes + 7) / 8);
    m_base->read(m_base_source[index], offset, count, m_base_buffer.data());
  }
  // A mapped reader's read() copies from the mapping: let its pages go, as the inputs' views are given back, or
  // the whole base would stay resident by the end of the merge.
  m_base->release(m_base_source[index], offset, count);
  return m_base_buffer.data();
}

// An input that stores the tensor in another float dtype than the plan reads it in (FloatDTypes::mixed): its
// elements are read as stored and converted, exactly where the plan's dtype holds them (an averaged tensor's).
bool Engine::read_converted(Reader& reader, std::size_t index, DType dtype, std::uint64_t offset, std::uint64_t count,
                            std::vector<double>& buffer) {
  const DType stored = reader.tensors()[index].dtype;
  if (stored == dtype) return false;
  WAVG_ASSERT(is_float(stored) && is_float(dtype));
  const std::uint64_t bytes = count * dtype_size(stored);
  if (m_stored.size() < (bytes + 7) / 8) m_stored.resize((bytes + 7) / 8);
  if (buffer.size() < (count * dtype_size(dtype) + 7) / 8) buffer.resize((count * dtype_size(dtype) + 7) / 8);
  void* dst = buffer.data();
  reader.read(index, offset, count, m_stored.data());
  dispatch_float(stored, [&]<DType From>() {
    dispatch_float(dtype, [&]<DType To>() {
      for (std::uint64_t i = 0; i < count; ++i) store<To>(dst, i, load<From>(m_stored.data(), i));
    });
  });
  return true;
}

BlockInputs Engine::block_view(const PlanEntry& entry, std::uint64_t count, std::size_t inputs) {
  return BlockInputs{entry.info.dtype, count, std::span<const void* const>(m_pointers.data(), inputs)};
}

// Names each input whose block differs from input 1's, with the first element that differs: the blocks are host
// memory (all_equal stays a memcmp on the host, see backend.hpp), so this is a plain comparison.
void Engine::name_differing_inputs(const PlanEntry& entry, std::uint64_t offset, std::uint64_t count,
                                   std::vector<Problem>& differ) const {
  const std::size_t size = dtype_size(entry.info.dtype);
  const auto* first = static_cast<const unsigned char*>(m_pointers[0]);
  for (std::size_t k = 1; k < m_inputs.size(); ++k) {
    const auto* other = static_cast<const unsigned char*>(m_pointers[k]);
    for (std::uint64_t i = 0; i < count; ++i) {
      if (std::memcmp(first + i * size, other + i * size, size) == 0) continue;
      differ.push_back({m_inputs[k]->path(), entry.info.name + ": " + std::string(dtype_name(entry.info.dtype)) +
                                                 " values differ from " + m_inputs.front()->path() + "'s (element " +
                                                 std::to_string(offset + i) + "; --int-policy equal)"});
      break;
    }
  }
}

void Engine::verify() {
  std::vector<Problem> differ;
  for (const PlanEntry& entry : m_plan.entries) {
    if (entry.action != Action::check_equal || entry.same_as != k_no_entry) continue;  // an alias: its target's
    const ElementRange mine = range(static_cast<std::size_t>(&entry - m_plan.entries.data()), entry);
    std::uint64_t off = 0;
    for (const std::uint64_t end : blocks(entry, mine)) {
      const std::uint64_t count = end - off;
      if (off < mine.first || end > mine.second) {
        off = end;
        continue;
      }
      read_block(entry, off, count, m_inputs.size(), mine.second);
      if (!m_backend.all_equal(block_view(entry, count, m_inputs.size()))) {
        name_differing_inputs(entry, off, count, differ);
        break;
      }
      off = end;
    }
  }
  release_block();
  if (!differ.empty()) throw Error(ExitCode::incompatible, std::move(differ));

  for (int pass = 0; m_method.wants_pass(pass); ++pass) {
    for (const PlanEntry& entry : m_plan.entries) {
      if (entry.action != Action::average || entry.same_as != k_no_entry || !m_method.observes(pass, entry)) continue;
      // A tensor of one block is then read once, not once per pass (a distributed merge may cut it between ranks).
      if (m_share.empty() && m_method.settles_in_combine(entry) && blocks(entry).size() == 1) continue;
      std::uint64_t off = 0;
      for (const std::uint64_t end : blocks(entry)) {
        const std::uint64_t count = end - off;
        read_block(entry, off, count, m_inputs.size());
        BlockInputs in = block_view(entry, count, m_inputs.size());
        in.base = read_base(entry, off, count);
        m_method.observe(pass, entry, off, in);
        off = end;
      }
    }
    m_method.end_pass(pass);
  }
  release_block();
}

// The guard is on the output alone, which was just written and is still in cache: the inputs are read again only
// when a block holds a NaN or an infinity, and then all of them at once (a method may spread one input's infinity
// over every tensor through a norm or a distance), once per run.
void Engine::check_finite(const PlanEntry& entry, std::uint64_t offset, std::uint64_t count) {
  const std::uint64_t i = first_non_finite(entry.out_dtype, m_out.data(), 0, count);
  if (i == count) return;
  if (!m_inputs_finite) m_inputs_finite = inputs_finite();
  if (!*m_inputs_finite) return;
  double value = 0;
  dispatch_float(entry.out_dtype, [&]<DType T>() { value = load<T>(m_out.data(), i); });
  throw Error(ExitCode::runtime, entry.info.name,
              std::string("the merge gives ") + (std::isnan(value) ? "NaN" : "infinity") + " at element " +
                  std::to_string(offset + i) +
                  " though every input is finite (are the weights too large for the values?); nothing was written");
}

bool Engine::inputs_finite() {
  release_block();
  std::vector<double> buffer;
  for (const PlanEntry& entry : m_plan.entries) {
    if (entry.action != Action::average || entry.same_as != k_no_entry) continue;
    std::uint64_t off = 0;
    for (const std::uint64_t end : blocks(entry)) {
      const std::uint64_t count = end - off;
      buffer.resize((count * dtype_size(entry.info.dtype) + 7) / 8);
      for (std::size_t k = 0; k < m_inputs.size(); ++k) {
        m_inputs[k]->read(entry.source[k], off, count, buffer.data());
        m_inputs[k]->release(entry.source[k], off, count);
        if (first_non_finite(entry.info.dtype, buffer.data(), 0, count) != count) return false;
      }
      if (const void* base = read_base(entry, off, count))
        if (first_non_finite(entry.info.dtype, base, 0, count) != count) return false;
      off = end;
    }
  }
  return true;
}

void Engine::run(Writer& writer) {
  for (std::size_t index = 0; index < m_plan.entries.size(); ++index) {
    // A kept alias is written with its target's result, computed again from the target's entry: the methods are
    // deterministic per entry and offset, so both names get the same values.
    const std::size_t from = m_plan.entries[index].same_as;
    const PlanEntry& entry = m_plan.entries[from == k_no_entry ? index : from];
    const bool average = entry.action == Action::average;
    if (!average && entry.copy_from == 0 && writer.holds_template_values(index)) continue;
    const std::size_t elem = dtype_size(entry.out_dtype);
    WAVG_ASSERT(average || entry.out_dtype == entry.info.dtype);
    const ElementRange mine = range(index, entry);
    std::uint64_t off = 0;
    for (const std::uint64_t end : blocks(entry, mine)) {
      const std::uint64_t count = end - off;
      if (off < mine.first || end > mine.second) {
        off = end;
        continue;
      }
      read_block(entry, off, count, average ? m_inputs.size() : entry.copy_from + 1, mine.second);
      const void* result = m_pointers[average ? 0 : entry.copy_from];
      if (average) {
        m_out.resize((count * elem + 7) / 8);
        BlockInputs in = block_view(entry, count, m_inputs.size());
        in.base = read_base(entry, off, count);
        m_method.combine(entry, off, in, m_out.data());
        check_finite(entry, off, count);
        result = m_out.data();
      }
      writer.write(index, off, count, result);
      off = end;
    }
  }
  release_block();
  writer.finish();
}

}  // namespace wavg
