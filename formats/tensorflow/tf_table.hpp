#pragma once
// The .index file's table layer (layout in tensorflow.hpp). LevelDB's Table and TableBuilder do the reading and
// building; this layer adapts their file interfaces to a mapped input and an output path, and adds the one check
// LevelDB leaves to its callers: LevelDB allocates a block's stated size before reading it and trusts that
// offset + size + 5 does not wrap, so a hostile block handle would make it allocate terabytes or read before its
// buffer. Every handle (footer, index entries) is therefore checked against the file's size first, and every block's
// Snappy header against a cap, by a small walk of the footer and the index block.

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace wavg::tftable {

// Calls `f(key, value)` for every entry of the table held in `data[0, size)`, in key order. Fails naming `file`
// when the table is corrupt (handles, checksums, block contents) or its keys are not strictly increasing.
void read_table(const unsigned char* data, std::uint64_t size, const std::string& file,
                const std::function<void(const std::string&, const std::string&)>& f);

// Writes a table holding `entries` (keys strictly increasing) to the existing, empty file `path`, uncompressed.
void write_table(const std::string& path, const std::vector<std::pair<std::string, std::string>>& entries,
                 const std::string& display);

}  // namespace wavg::tftable
