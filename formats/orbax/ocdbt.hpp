#pragma once
// OCDBT, the key-value store Orbax keeps its arrays in by default (tensorstore's "ocdbt" driver; the format is
// specified in tensorstore's docs, tensorstore/kvstore/ocdbt/index.rst, and written by format/*.cc there). Only
// what a reader of the latest version needs is decoded: the manifest, then the B+tree of that version down to its
// leaves. Every integer is little-endian; varint is unsigned LEB128 (at most 10 bytes, 64 bits).
//
// Every encoded structure (manifest, B+tree node, version tree node) has the same envelope:
//   u32 big-endian   magic: 0x0cdb3a2a manifest, 0x0cdb20de B+tree node, 0x0cdb1234 version tree node
//   u64              length of the whole encoding, this header and the CRC included
//   varint           format version, 0
//   varint           compression: 0 none, 1 zstd (the rest up to the CRC is one zstd stream)
//   ...              the body
//   u32              CRC-32C of every byte before it
//
// Data file table (inside a body; paths relative to the database folder): varint N; N-1 varints prefix[i]
// (bytes path[i] shares with path[i-1]); N varints suffix_length[i]; N varints base_length[i]; the N suffixes
// concatenated. path[i] = path[i-1][0, prefix[i]) + suffix[i]. A node reached through file i of its parent's
// table finds its own files below transitive + path[i][0, base_length[i]), where `transitive` is what the parent
// itself was given ("" from the manifest): its paths are that prefix plus its own.
//
// Manifest body: uuid (16 bytes), manifest_kind (u8: 0 single, 1 numbered: the version tree then lies in the
// highest manifest.XXXXXXXXXXXXXXXX, 16 hex digits, as a single manifest), max_inline_value_bytes (varint),
// max_decoded_node_bytes (varint), version_tree_arity_log2 (u8, 1 to 16), compression_method (varint: 0, or 1
// followed by an i32 zstd level); for a single manifest then a data file table, the inline versions (varint N, at
// most 2^arity_log2; N varints generation (strictly increasing, not 0); N u8 root heights; N varints file id; N
// varints offset; N varints length; N varints num_keys, N num_tree_bytes, N num_indirect_value_bytes; N u64
// commit times) and the version nodes (older versions, not needed: varint M, then M varints each of generation,
// file id, offset, length, num_generations, M u64 commit times, M u8 heights). The latest version is the last
// inline one.
//
// B+tree node body: u8 height, a data file table, varint num_entries (1 to 2^20), then the keys: num_entries - 1
// varints prefix[i] (bytes key[i] shares with key[i-1]); num_entries varints suffix_length[i]; for an interior
// node (height > 0) num_entries varints subtree_common_prefix[i]; the suffixes concatenated. Keys strictly increase.
//   leaf (height 0): num_entries varints value_length; num_entries u8 value_kind (0 inline, 1 in a data file);
//     per out-of-line value a varint file id, then per out-of-line value a varint offset; the inline values
//     concatenated.
//   interior: num_entries varints file id, offset, length (each column whole before the next), then the three
//     statistics columns (num_keys, num_tree_bytes, num_indirect_value_bytes), num_entries varints each. Child i
//     lies at that place, has height height - 1, and its keys are the prefix the node was given plus
//     key[i][0, subtree_common_prefix[i]) followed by the child's own keys.
//
// Distrusted throughout: every count against the bytes left, every file id against its table, every offset and
// length against the file (mapped once each), paths that climb out of the folder ('..', '/' at the start), heights
// that do not step down by one, keys out of order or repeated across the whole tree, CRCs, decoded sizes (a node at
// most max_decoded_node_bytes, 64 MiB at most), and trees visiting more than 2^20 nodes (a node referenced from many
// parents).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "wavg/mapped_file.hpp"

namespace wavg::orbax {

// Where a value of the store lies: in a data file (`file` relative to the database folder) or inline.
struct OcdbtValue {
  std::string file;     // empty for an inline value
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::string bytes;    // the inline value
};

// The store's latest version: every key and its value.
using OcdbtKeys = std::map<std::string, OcdbtValue>;

// Gives the bytes of [offset, offset + length) of data file `path` (relative to the database folder), refusing
// (Error) a range outside it.
using OcdbtFiles = std::function<std::span<const unsigned char>(const std::string& path, std::uint64_t offset,
                                                                std::uint64_t length)>;

// Returns the body of an encoded structure (the envelope above) whose magic must be `magic`, decompressed at most
// to `max_body` bytes; `file` and `what` name it in errors.
std::string ocdbt_body(const std::string& file, const std::string& what, std::uint32_t magic,
                       std::span<const unsigned char> encoded, std::uint64_t max_body);

// Where the latest version's B+tree root lies, from a decoded manifest.
struct OcdbtRoot {
  bool numbered = false;  // a numbered manifest: the version tree lies in manifest.XXXXXXXXXXXXXXXX
  bool empty = false;     // the store holds no key
  std::string file;
  std::uint64_t offset = 0, length = 0;
  std::uint8_t height = 0;
  std::uint64_t max_node_bytes = 0;  // the configuration's max_decoded_node_bytes
};

// Decodes the manifest `encoded` (the bytes of manifest.ocdbt or manifest.XXXXXXXXXXXXXXXX).
OcdbtRoot ocdbt_manifest(const std::string& file, std::span<const unsigned char> encoded);

// Walks the B+tree under `root`, reading its nodes through `files`, and returns every key of the version.
OcdbtKeys ocdbt_keys(const std::string& folder, const OcdbtRoot& root, const OcdbtFiles& files);

// Opens the OCDBT database in `folder` (manifest.ocdbt and the data files it names, each mapped once) and lends
// the bytes of its values.
class OcdbtStore {
 public:
  explicit OcdbtStore(std::string folder);
  ~OcdbtStore();
  const OcdbtKeys& keys() const { return m_keys; }
  // Returns the bytes of `value` (its inline bytes, or its range of its data file).
  std::span<const unsigned char> bytes(const OcdbtValue& value);
  // Lists the data files read, folder-relative.
  std::vector<std::string> files() const;

 private:
  std::span<const unsigned char> range(const std::string& path, std::uint64_t offset, std::uint64_t length);

  std::string m_folder;
  std::map<std::string, std::unique_ptr<MappedFile>> m_files;
  OcdbtKeys m_keys;
};

}  // namespace wavg::orbax
