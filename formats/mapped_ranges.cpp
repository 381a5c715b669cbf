#include "mapped_ranges.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

namespace wavg {

namespace {
// Widens [begin, end) to whole pages, as madvise() wants.
std::pair<std::uint64_t, std::uint64_t> page_range(std::uint64_t begin, std::uint64_t end) {
  static const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return {begin / page * page, (end + page - 1) / page * page};
}
}  // namespace

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
