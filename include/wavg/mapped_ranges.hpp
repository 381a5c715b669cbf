#pragma once
// Residency control for readers that serve blocks straight from a read-only memory mapping of their file
// (Reader::view): without it every page the merge touched would stay in the process's resident set, and peak
// memory would grow with the model instead of staying at a few blocks.

#include <cstdint>

namespace wavg {

// Names the file behind a mapping for the SIGBUS handler: touching a page of a mapped file that another program
// has truncated raises SIGBUS, which then gives the usual one-line error naming the file and exit 1, with pending
// outputs removed, instead of a crash that leaves the temporary output behind. Async-signal-safe lookup; up to 256
// mappings at once (more are simply not named: the default action then applies).
void register_mapping(const void* map, std::uint64_t size, const char* path);
void unregister_mapping(const void* map);

// Drops the pages of [begin, end) of a mapping of `size` bytes (plus a margin that fault-around mapped too) from
// the resident set. Loses nothing: a later touch maps them again from the page cache.
void release_mapped(const void* map, std::uint64_t size, std::uint64_t begin, std::uint64_t end);
// Starts asynchronous read-ahead of [begin, end) of the mapping; returns at once.
void prefetch_mapped(const void* map, std::uint64_t size, std::uint64_t begin, std::uint64_t end);

}  // namespace wavg
