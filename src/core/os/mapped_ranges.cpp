#include "wavg/mapped_ranges.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <utility>

#include "wavg/error.hpp"
#include "wavg/signals.hpp"

namespace wavg {

namespace {

struct MappingSlot {
  std::atomic<const char*> begin{nullptr};
  std::uint64_t size = 0;
  char path[1024] = {};
};
std::array<MappingSlot, 256> g_mappings;
std::mutex g_mappings_mutex;  // registration only; the handler reads without it

// Explains a SIGBUS inside one of the registered mappings: another program truncated the file under it.
bool explain_sigbus(int sig, const void* address, const char*& file, const char*& what) noexcept {
  if (sig != SIGBUS || !address) return false;
  const char* addr = static_cast<const char*>(address);
  for (const MappingSlot& m : g_mappings) {
    const char* b = m.begin.load(std::memory_order_acquire);
    if (b && addr >= b && static_cast<std::uint64_t>(addr - b) < m.size) {
      file = m.path;
      what = "the file shrank while wavg was reading it (changed by another program?)";
      return true;
    }
  }
  return false;
}

// Widens [begin, end) to whole pages, as madvise() wants.
std::pair<std::uint64_t, std::uint64_t> page_range(std::uint64_t begin, std::uint64_t end) {
  static const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return {begin / page * page, (end + page - 1) / page * page};
}
}  // namespace

void register_mapping(const void* map, std::uint64_t size, const char* path) {
  static const bool explained = [] {
    signals::set_fault_explainer(signals::FaultSource::mapped_file, explain_sigbus);
    return true;
  }();
  (void)explained;
  const std::lock_guard lock(g_mappings_mutex);
  for (MappingSlot& m : g_mappings)
    if (!m.begin.load(std::memory_order_relaxed)) {
      m.size = size;
      // Escaped now: the handler cannot allocate, and a shard's name comes from a file.
      std::snprintf(m.path, sizeof m.path, "%s", printable(path).c_str());
      m.begin.store(static_cast<const char*>(map), std::memory_order_release);
      return;
    }
}

void unregister_mapping(const void* map) {
  const std::lock_guard lock(g_mappings_mutex);
  for (MappingSlot& m : g_mappings)
    if (m.begin.load(std::memory_order_relaxed) == map) m.begin.store(nullptr, std::memory_order_release);
}

void release_mapped(const void* map, std::uint64_t size, std::uint64_t begin, std::uint64_t end) {
  if (!map || begin >= end) return;
  // A page fault maps the cached pages around the faulting one too (fault-around, up to a whole large folio), so
  // pages outside [begin, end) become resident and would pile up block after block: drop a margin on both sides.
  constexpr std::uint64_t margin = 2u << 20;
  const auto [from, to] = page_range(begin > margin ? begin - margin : 0, std::min(end + margin, size));
  ::madvise(const_cast<char*>(static_cast<const char*>(map)) + from, to - from, MADV_DONTNEED);
}

void prefetch_mapped(const void* map, std::uint64_t size, std::uint64_t begin, std::uint64_t end) {
  if (!map || begin >= end) return;
  const auto [from, to] = page_range(begin, std::min(end, size));
  ::madvise(const_cast<char*>(static_cast<const char*>(map)) + from, to - from, MADV_WILLNEED);
}

}  // namespace wavg
