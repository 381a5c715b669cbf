#pragma once
// Hugging Face model folders (transformers' save_pretrained, huggingface_hub's split_torch_state_dict_into_shards).
//
// A folder holds the weights in one of four layouts, looked for in this order (safetensors first, as transformers
// does), besides config.json, tokenizer files, generation_config.json and the like:
//
//   model.safetensors.index.json   sharded safetensors: { "metadata": { "total_size": BYTES, ... },
//                                                         "weight_map": { "TENSOR": "SHARD", ... } }
//     model-00001-of-00003.safetensors ...   the shards the index names (any names; these are the ecosystem's)
//   model.safetensors              one safetensors file (safetensors.hpp)
//   pytorch_model.bin.index.json   sharded torch.save state_dicts, the same index
//     pytorch_model-00001-of-00003.bin ...
//   pytorch_model.bin              one torch.save state_dict (pytorch/pytorch.hpp)
//
// An input is the folder or its index file. The reader opens every shard with its format's reader and serves the
// tensors from them, shard by shard in the order of their names. It distrusts the index: at most 64 MiB, valid
// UTF-8 JSON without duplicate keys, weight_map an object of strings; each shard named by a plain relative path
// (no "..", not absolute) to a regular file, not a symbolic link (so a hub cache snapshot, links to its blobs, is
// refused), that resolves inside the folder; every tensor of the index found in the shard it names and every
// tensor of a shard named by the index for that shard (so no tensor is in two shards); and no file of the folder
// named like a shard (PREFIX-NNNNN-of-NNNNN.EXT of the index's kind) left out of the index. metadata.total_size is not
// checked: the ecosystem's writers have disagreed on it (tied weights, padding), and the tensors are counted from the
// shards themselves. metadata() holds the index's string metadata (a wavg output's provenance) over shard 1's.
//
// The writer makes a folder (an AtomicDirectory's temporary directory): shards of at most the spec's shard size
// (a tensor larger than that alone in its shard), filled in the output's tensor order as huggingface_hub does,
// named model-0000I-of-0000N.safetensors (format "hf") or pytorch_model-0000I-of-0000N.bin (format "hf-bin",
// plain state_dicts torch.load(weights_only=True) accepts), with the index (metadata.total_size, the provenance as
// metadata strings, weight_map sorted by name); a single shard is model.safetensors or pytorch_model.bin without
// an index, as save_pretrained writes it. Every safetensors shard's __metadata__ holds "format": "pt", which
// transformers requires, and the provenance. When input 1 is a folder, its other regular files (not symbolic
// links, not hidden, not in subfolders, not weights: .safetensors .bin .pt .pth .ckpt .h5 .msgpack .gguf .onnx
// .npz .pkl or *.index.json) are copied into the output.
//
// An existing output folder (--force) must be empty or hold a model; only the model in it is replaced (hf_target.cpp,
// atomic_directory.hpp): the new files are moved in, shards under names the folder does not hold yet (with the run's
// token, model-00001-of-00003-TOKEN.safetensors, when the ecosystem's names are taken), the index or single weights
// file last, and then the old model's weights and indexes are removed: model.safetensors, pytorch_model.bin, their
// indexes, the shards an old index lists and files named like wavg's shards. Everything else stays as it was. A
// name the output writes that the folder holds as a folder or a link is refused.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "listed_reader.hpp"
#include "wavg/format.hpp"

namespace wavg::hf {

class FolderReader final : public ListedReader {
 public:
  // Opens a folder, or the index file `path` names. Throws Error (exit 1) naming the file at fault.
  explicit FolderReader(const std::string& path);

  // Returns the index (when there is one), then the shards.
  std::vector<std::string> files() const override;
  std::string layout() const override;
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override;
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void release(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  std::vector<std::string> kept_entries() const override;

  // Returns the folder the model lies in.
  const std::string& folder() const { return m_folder; }
  // Returns shard 1's reader (its metadata, such as safetensors' "format").
  const Reader& first_shard() const { return *m_shards.front(); }
  // Tells whether `name` (a file of the folder) holds weights or a weights index, which an output never copies.
  static bool is_weights_file(const std::string& name);

 private:
  void open_index(const std::string& index_name);
  void add_shard(const std::string& name);
  void check_unlisted_shards(const std::string& index_name) const;

  std::string m_folder;
  std::string m_index;  // the index file's path, or empty
  std::vector<std::string> m_shard_names;
  std::vector<std::unique_ptr<Reader>> m_shards;
  std::vector<std::pair<std::size_t, std::size_t>> m_where;  // per tensor: shard, index in the shard
};

// Tells whether an input is a folder holding one of the four layouts, or a *.index.json whose weight_map says it
// is a sharded checkpoint's index.
bool looks_like_hf(const SniffInput& input);

// Tells whether `name` is a shard name wavg writes: (model|pytorch_model)-NNNNN-of-NNNNN[-TOKEN].(safetensors|bin).
bool is_shard_name(const std::string& name);
// Refuses (usage error) an existing `folder` that is not empty and holds no model.
void check_target_folder(const std::string& folder);
// Refuses (usage error) an entry `name` of `folder` that the output's file of that name would replace and that is
// not a regular file (a folder, a symbolic link).
void check_replaceable(const std::string& folder, const std::string& name);
// Returns the old model's files in `folder` that the output may remove (removal.hpp; none when it does not exist),
// indexes and single weights files first.
std::vector<std::string> old_model_files(const std::string& folder);

// The ecosystem's default largest shard (save_pretrained's max_shard_size="5GB"), in bytes.
constexpr std::uint64_t k_default_shard_size = 5'000'000'000ull;

std::unique_ptr<Writer> create_hf_writer(const std::string& tmp_dir, const std::string& display_path,
                                         const OutputSpec& spec);
std::unique_ptr<Writer> create_hf_bin_writer(const std::string& tmp_dir, const std::string& display_path,
                                             const OutputSpec& spec);

}  // namespace wavg::hf
