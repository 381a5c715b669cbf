#pragma once
// Residency control for readers that serve blocks straight from a read-only memory mapping of their file
// (Reader::view): without it every page the merge touched would stay in the process's resident set, and peak
// memory would grow with the model instead of staying at a few blocks.

#include <cstdint>

namespace wavg {

// Drops the pages of [begin, end) of a mapping of `size` bytes (plus a margin that fault-around mapped too) from
// the resident set. Loses nothing: a later touch maps them again from the page cache.
void release_mapped(const void* map, std::uint64_t size, std::uint64_t begin, std::uint64_t end);
// Starts asynchronous read-ahead of [begin, end) of the mapping; returns at once.
void prefetch_mapped(const void* map, std::uint64_t size, std::uint64_t begin, std::uint64_t end);

}  // namespace wavg
