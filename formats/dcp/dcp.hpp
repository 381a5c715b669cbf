#pragma once
// PyTorch Distributed Checkpoint folders (torch.distributed.checkpoint.save with its FileSystemWriter; what FSDP,
// FSDP2 and torchtitan save), whatever the number of ranks that wrote them and however each tensor was sharded.
//
//   FOLDER/.metadata         a pickle of torch.distributed.checkpoint.metadata.Metadata:
//     state_dict_metadata    {NAME: TensorStorageMetadata(properties=TensorProperties(state (dtype, layout,
//                             requires_grad, _MEM_FORMAT_ENCODING(n), pin_memory[, strides])), size=torch.Size,
//                             chunks=[ChunkStorageMetadata(offsets=torch.Size, sizes=torch.Size), ...])
//                             or BytesStorageMetadata() for any other value (an optimizer's lr, a step count
//                             kept as a Python int), torch.save'd whole}
//     storage_data           {MetadataIndex(fqn=NAME, offset=torch.Size or None, index): _StorageInfo(
//                             relative_path='__R_I.distcp', offset=BYTE, length=BYTES[, transform_descriptors])}
//     planner_data, storage_meta, version   (not used)
//   FOLDER/__R_I.distcp      rank R's data (I: its writer thread): per tensor chunk, at its _StorageInfo's
//                             offset, a whole torch.save archive of that chunk (pytorch.hpp's zip format: TOP/data.pkl
//                             a _rebuild_tensor_v2 of sizes the chunk's, TOP/data/KEY its storage); per bytes
//                             value, its torch.save'd bytes
//
// A chunk is a box of the tensor: its offsets and sizes per dimension. Every tensor is assembled from its chunks in
// the reader (row-wise, column-wise, FSDP's flat or DTensor shards alike), so inputs written by different numbers
// of ranks merge with each other. The .metadata pickle is read by pytorch's restricted unpickler with DCP's value
// names (dtypes, the memory-format enum, pathlib paths) as data; every object must be of the classes above.
// Distrusted: every chunk inside its tensor, chunks neither overlapping nor leaving holes (named by tensor), every
// data file present (a missing rank's file is named), every storage's offset and length inside its file, and each
// chunk's archive: stored (never compressed), its tensor of the chunk's sizes, dtype and contiguous, inside its
// storage. Transformed chunks (transform_descriptors: compressed by an extension) are refused. Each data file is
// mapped once; a block lying in one run of one chunk is lent straight from the mapping, one that spans several runs
// is copied from them. A tensor whose chunks are each one run (row-wise shards) tells the engine where they meet
// (boundaries()), so its blocks end there and are lent whole.
//
// What each tensor is (TensorInfo::role) comes from the state dict's structure, not from a name: under an
// optimizer state dict (a dict holding "state" and "param_groups"), per-parameter tensors are optimizer state,
// except the counters among their keys (Adam's step, NAdam's mu_product: a key, never a rank, decides, since a
// scalar parameter's moments are scalars too); tensors under param_groups (a tensor
// learning rate) are hyper-parameters. The plan gives each role its rule (counters and hyper-parameters follow
// --int-policy); the rest are unknown to the reader (DCP does not tell weights from buffers) and left to the plan.
// The bytes values (a Python float lr, betas, a torchtitan train_state) are kept from input 1: kept_entries().
//
// The writer makes a DCP folder in input 1's layout: input 1's files copied less every output tensor's chunks,
// which are written in place, their archives' CRC-32s computed from the bytes written (pytorch/copied_files.hpp,
// each output byte written once); .metadata is input 1's byte for byte, so
// torch.distributed.checkpoint.load into the same model and optimizer resumes from the merge. An output that leaves
// tensors of input 1 out (--exclude, --include, --optimizer-state drop, --tensors intersection) gets new rank files
// of the same names: each holds, one after the other in input 1's order, the archives of the kept tensors' chunks
// and the bytes values (each archive as torch wrote it: a torch.save archive's offsets are relative to its start),
// and a fresh .metadata describes exactly those: input 1's items without the left-out tensors, their storages at
// the new offsets (a rank file left empty is not written). wavg.json beside them (a file DCP ignores) holds the
// provenance. Over an existing DCP folder (--force) .metadata is placed last and the old folder's data files
// (__R_I.distcp) that the new one lacks are removed; other files stay.
//
// An output input 1's layout cannot hold (input 1 not a DCP folder, --out-dtype, a tensor input 1 lacks) is written
// afresh instead (dcp_fresh_writer.cpp): one rank file of whole tensors and a fresh .metadata, as a single process's
// dcp.save writes them.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dcp/dcp_metadata.hpp"
#include "mapped_tensors.hpp"
#include "pytorch/zip_layout.hpp"
#include "wavg/format.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg::dcp {

// Where one chunk of a tensor lies.
struct Chunk {
  Shape offsets, sizes;
  std::size_t file = 0;       // index into DcpReader::data_files()
  std::uint64_t begin = 0;    // file offset of the chunk's element 0
  std::uint64_t archive = 0;  // file offset of the chunk's torch.save archive
  std::uint64_t length = 0;   // the archive's bytes (its _StorageInfo's length)
  pytorch::ZipEntry storage;  // its storage entry, offsets relative to `archive`
  std::size_t meta = 0;       // its index in the metadata's list of the tensor's chunks (Item::chunks)
};

// How a tensor's flat (row-major) elements map to its chunks. The dimensions from `inner_dims` on are whole in
// every chunk, so `inner` consecutive elements (their product) always lie in one chunk, consecutively.
struct TensorChunks {
  std::vector<Chunk> chunks;
  std::size_t inner_dims = 0;
  std::uint64_t inner = 1;
};

// `count` consecutive elements of a tensor, lying consecutively in one chunk from its element `at`.
struct Run {
  std::size_t chunk = 0;
  std::uint64_t at = 0;
  std::uint64_t count = 0;
};

// Checks that `t`'s chunks lie inside its shape and cover it exactly (Error naming `file` and the tensor: overlap,
// hole), and fills inner_dims and inner.
void check_cover(const std::string& file, const TensorInfo& t, TensorChunks& c);
// Returns the run holding element `pos` of `t`, at most `end - pos` long. `hint` is the chunk of the last run.
Run run_at(const TensorInfo& t, const TensorChunks& c, std::uint64_t pos, std::uint64_t end, std::size_t& hint);

class DcpReader final : public MappedPiecesReader {
 public:
  // Opens the folder `path`. Throws Error (exit 1) naming the file at fault.
  explicit DcpReader(const std::string& path);

  std::vector<std::string> files() const override;
  std::vector<std::uint64_t> boundaries(std::size_t index) const override;
  std::vector<std::string> kept_entries() const override { return m_kept; }

  const std::string& folder() const { return m_folder; }
  // The data files' names in the folder, in the order Chunk::file indexes them.
  const std::vector<std::string>& data_files() const { return m_names; }
  const TensorChunks& chunks(std::size_t index) const { return m_chunks[index]; }
  const MappedFile& data_file(std::size_t file) const { return *m_files[file]; }
  // The .metadata as read: every item in its order (tensors in the order of tensors()), with its storages.
  const Metadata& dcp_metadata() const { return m_meta; }

 private:
  void pieces(std::size_t index, std::uint64_t offset, std::uint64_t count, const PieceFn& f) const override;
  // Refuses (Error naming `meta_path`) two chunks' archives or bytes values that share bytes of a data file.
  void check_no_shared_bytes(const std::string& meta_path) const;

  std::string m_folder;
  std::vector<std::string> m_names;
  std::vector<std::unique_ptr<MappedFile>> m_files;
  std::vector<TensorChunks> m_chunks;
  std::vector<std::string> m_kept;
  Metadata m_meta;
};

// Reads the finished folder `tmp_dir` back as an input and checks it holds `spec`'s tensors with their dtypes and
// shapes, so that a folder wavg could not read again is never committed (Error naming `display`).
void verify_output(const std::string& tmp_dir, const std::string& display, const OutputSpec& spec);

// Tells whether `path` is a folder holding a .metadata file.
bool looks_like_dcp(const SniffInput& input);

// Refuses (usage error) an existing folder `display` that is neither empty nor a DCP folder (--force replaces only a
// DCP checkpoint).
void check_dcp_folder(const std::string& display);
// Over an existing DCP folder: places .metadata last and removes the old data files the new folder lacks.
void replace_dcp_folder(const std::string& tmp_dir, const std::string& display);

// A DCP folder of one rank file, __0_0.distcp, holding each output tensor whole as torch's FileSystemWriter
// saves it (one torch.save archive per tensor), and a fresh .metadata: for an input 1 that is not a DCP folder.
std::unique_ptr<Writer> create_fresh_dcp_writer(const std::string& tmp_dir, const std::string& display_path,
                                                const OutputSpec& spec);
std::unique_ptr<Writer> create_dcp_writer(const std::string& tmp_dir, const std::string& display_path,
                                          const OutputSpec& spec);

}  // namespace wavg::dcp
