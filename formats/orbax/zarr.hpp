#pragma once
// Zarr arrays as Orbax writes them through tensorstore, one per leaf: their metadata and their chunks.
//
// Zarr v2 (`.zarray`, zarr-specs docs/v2): {"zarr_format": 2, "shape": [..], "chunks": [..], "dtype": "<f4" (a numpy
// type string; tensorstore writes "bfloat16" by name), "compressor": null | {"id": "zstd" | "gzip" | "zlib" |
// "blosc", ...}, "filters": null, "order": "C", "fill_value": null | a number | "NaN" | "Infinity" | "-Infinity",
// "dimension_separator": "." | "/"}. Chunk (i, j) is the key "i.j" (or "i/j"), "0" for a 0-d array.
//
// Zarr v3 (`zarr.json`, zarr-specs v3.0): {"zarr_format": 3, "node_type": "array", "shape", "data_type": "float32"
// | "bfloat16" | "int32" | ..., "chunk_grid": {"name": "regular", "configuration": {"chunk_shape"}},
// "chunk_key_encoding": {"name": "default" (keys "c/i/j", "c" for 0-d; separator "/" or ".") | "v2" ("i.j")},
// "fill_value", "codecs": [...]}. The codecs are "bytes" (little-endian) then at most one of zstd, gzip, blosc,
// and a final "crc32c" (4 bytes after the data, checked); or a single "sharding_indexed" (what Orbax writes), whose
// configuration holds the inner chunk_shape, the same list of codecs for each inner chunk, index_codecs ("bytes",
// optionally "crc32c") and index_location ("end" by default, or "start"). A shard file holds its inner chunks and
// an index of one (offset u64, nbytes u64) pair per inner chunk in C order, both 2^64 - 1 for an absent chunk.
//
// A chunk is stored whole (edge chunks padded to the chunk shape), C order; a chunk that is not stored holds the
// fill value (tensorstore leaves out chunks equal to it unless told otherwise). Decompressed chunks must be
// exactly the chunk's size. Transposed orders, filters, big-endian data and other codecs are refused by name;
// blosc needs libblosc at build time and is refused otherwise.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "wavg/tensor.hpp"

namespace wavg::orbax {

enum class Compression : std::uint8_t { none, zstd, gzip, zlib, blosc };

struct ZarrArray {
  int format = 2;       // 2 or 3
  DType dtype = DType::f32;
  Shape shape;
  Shape chunk;          // the chunk (an inner chunk of a shard) each piece of data is decompressed as
  Compression compression = Compression::none;
  bool crc32c = false;  // v3: each chunk ends in its CRC-32C
  std::vector<unsigned char> fill;  // one element, native byte order
  char separator = '.';
  bool v3_default_keys = false;  // keys "c/i/j" (v3 default encoding), else "i.j"
  // v3 sharding: the shard (a whole stored file) in chunks per dimension, and its index.
  bool sharded = false;
  Shape shard;          // inner chunks per shard per dimension
  bool index_at_start = false;
  bool index_crc32c = false;
};

// Parses a .zarray (v2) or zarr.json (v3) document; `file` names it in errors. Refuses what it cannot read.
ZarrArray parse_zarr(const std::string& file, std::string_view text, int format);

// Returns the number of chunks along each dimension.
Shape chunk_grid(const ZarrArray& a);

// Returns the key (relative to the array) of the stored file holding chunk `index` (per dimension): the chunk's
// own file, or its shard's.
std::string chunk_key(const ZarrArray& a, const Shape& index);

// Locates inner chunk `index` in the bytes of its shard file; empty optional when the shard says it is absent.
std::optional<std::span<const unsigned char>> shard_entry(const std::string& file, const ZarrArray& a,
                                                          std::span<const unsigned char> shard, const Shape& index);

// Decodes one stored chunk (`stored`, compressed as `a` says) into `out`, which holds exactly the chunk's bytes.
void decode_chunk(const std::string& file, const ZarrArray& a, std::span<const unsigned char> stored,
                  std::span<unsigned char> out);

// Tells whether this build decodes blosc.
bool have_blosc();

}  // namespace wavg::orbax
