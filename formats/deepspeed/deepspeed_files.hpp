#pragma once
// What the DeepSpeed reader needs of its torch.save files: each parsed by pytorch's zip parser and restricted
// unpickler, the values looked up by key, and a tensor's place in its file checked against its storage.

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "deepspeed/deepspeed.hpp"
#include "pytorch/pickle.hpp"
#include "pytorch/zip_layout.hpp"

namespace wavg::deepspeed {

// One torch.save file: its pickle and where each storage's bytes lie.
struct TorchFile {
  std::string path;
  pytorch::Pickle pickle;
  std::map<std::string, pytorch::ZipEntry> storages;
};

// Parses a torch.save file of a DeepSpeed checkpoint (DeepSpeed's own classes in it read as values). Throws Error.
TorchFile parse(const MappedFile& file);
// Returns dict[key] (a string key) or null.
const pytorch::Value* get(const pytorch::Value* dict, const char* key);
// A dict's string keys to their values (the first of a repeated key, as get finds it): built once, so looking up
// every key of a large dict stays linear in its size.
using Index = std::unordered_map<std::string_view, const pytorch::Value*>;
Index index_of(const pytorch::Value* dict);
// Returns dict[key] for an integer key, or null.
const pytorch::Value* get(const pytorch::Value* dict, std::int64_t key);
// Returns a ZeroStageEnum (an object holding its value) or a plain int. Throws Error naming `what`.
std::int64_t integer(const TorchFile& f, const pytorch::Value* v, const char* what);
// Tells whether `v` is a tensor (a storage reference with its view).
bool is_tensor(const pytorch::Value* v);
// Returns a contiguous tensor's place in its file (file index `file`) as one piece, and the storage entry holding
// it. Throws Error naming `what` when it is no tensor, another dtype, not contiguous or outside its storage.
DeepspeedReader::Piece piece(const TorchFile& f, std::size_t file, const pytorch::Value* v, DType dtype,
                             const std::string& what, pytorch::ZipEntry* entry = nullptr);
// zero_to_fp32's natural_keys order: digits compare as numbers.
bool natural_less(const std::string& a, const std::string& b);
bool ends_with(const std::string& s, const std::string& suffix);
// Returns the checkpoint folder itself: `path`, or the one its `latest` file names; refuses a `latest` or a tag
// folder that leads out of `path` through a symbolic link (link_out_of_folder).
std::string checkpoint_folder(const std::string& path);

}  // namespace wavg::deepspeed
