#pragma once
// The .metadata pickle of a DCP folder, as plain data (layout in dcp.hpp).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wavg/tensor.hpp"

namespace wavg::dcp {

struct Storage {
  std::string file;  // relative_path, a plain file name
  std::uint64_t offset = 0, length = 0;
};

struct ChunkMeta {
  Shape offsets, sizes;
  Storage where;
};

// A tensor's TensorProperties besides its dtype, as input 1 recorded them (a DCP output's fresh .metadata repeats
// them).
struct Properties {
  std::string layout = "torch.strided";
  bool requires_grad = false;
  std::uint64_t memory_format = 0;  // _MEM_FORMAT_ENCODING's value
  bool pin_memory = false;
  bool has_strides = false;      // a sixth element (torch >= 2.6 writes one; older torch reads only five)
  std::optional<Shape> strides;  // its value, or None
};

// One element of a planner_data path: a state dict key or a list index.
struct PathPart {
  bool index = false;
  std::int64_t number = 0;
  std::string key;
};

struct Item {
  std::string name;
  bool tensor = false;  // else a torch.save'd value (BytesStorageMetadata)
  DType dtype = DType::f32;
  Shape shape;
  Properties properties;          // tensors
  std::vector<ChunkMeta> chunks;  // tensors, in the metadata's order
  Storage where;                  // bytes values
  std::vector<std::string> path;  // the name split at '.'
  Role role = Role::unknown;      // from the state dict's structure (see dcp.hpp); unknown outside an optimizer
  // planner_data's entry: the path of keys the name flattens (DefaultSavePlanner's); empty when it is not a tuple
  // of strings and integers, or absent (planned false).
  std::vector<PathPart> planner;
  bool planned = false;
};

struct Metadata {
  std::vector<Item> items;
  bool planner_data = false;           // a planner_data dict (else None)
  std::optional<std::string> version;  // Metadata.version, when a string
};

// Parses the pickle (Error naming `file` for anything but DCP's metadata classes, a storage missing for a chunk,
// a relative_path that is not a plain name, a dtype wavg does not read) and gives every item its role.
Metadata parse_metadata(const std::string& file, const unsigned char* data, std::size_t size);

// Returns a .metadata pickle describing `meta` (its items with their storages as given), which
// torch.distributed.checkpoint's FileSystemReader and parse_metadata read: state_dict_metadata, planner_data,
// storage_data (MetadataIndex -> _StorageInfo) and version; no storage_meta (torch makes an empty one on load).
// Throws Error naming `display` for an item whose planner_data entry is not a path of keys; an item input 1 gave
// no entry gets none.
std::string metadata_pickle(const Metadata& meta, const std::string& display);

}  // namespace wavg::dcp
