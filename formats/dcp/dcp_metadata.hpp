#pragma once
// The .metadata pickle of a DCP folder, as plain data (layout in dcp.hpp).

#include <cstdint>
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

struct Item {
  std::string name;
  bool tensor = false;  // else a torch.save'd value (BytesStorageMetadata)
  DType dtype = DType::f32;
  Shape shape;
  std::vector<ChunkMeta> chunks;  // tensors
  Storage where;                  // bytes values
  std::vector<std::string> path;  // the name split at '.'
  Role role = Role::unknown;      // from the state dict's structure (see dcp.hpp); unknown outside an optimizer
};

// Parses the pickle (Error naming `file` for anything but DCP's metadata classes, a storage missing for a chunk,
// a relative_path that is not a plain name, a dtype wavg does not read) and gives every item its role.
std::vector<Item> parse_metadata(const std::string& file, const unsigned char* data, std::size_t size);

}  // namespace wavg::dcp
