#pragma once
// DeepSpeed ZeRO checkpoint folders (engine.save_checkpoint: global_stepN/), read as DeepSpeed's zero_to_fp32.py
// consolidates them, but streamed: each parameter's fp32 master values are served from the ranks' partitions in
// their mapped files, never gathered in memory.
//
//   FOLDER/latest                              the tag of the newest checkpoint ("global_step3000"), followed
//                                              when the folder above the checkpoints is given
//   FOLDER/TAG/mp_rank_00_model_states.pt      (ZeRO 1 and 2; zero_pp_rank_0_mp_rank_00_model_states.pt for 3) a
//                                              torch.save dict: module (the state_dict; its buffers are read from
//                                              it), buffer_names, param_shapes [{NAME: torch.Size} per param
//                                              group], shared_params {ALIAS: NAME}, frozen_param_shapes, ...
//   FOLDER/TAG/*zero_pp_rank_R_mp_rank_00_optim_states.pt   per data-parallel rank R: optimizer_state_dict
//                                              {zero_stage (ZeroStageEnum), partition_count, and the fp32 master
//                                              partitions: single_partition_of_fp32_groups (ZeRO 1, 2: one flat
//                                              tensor per group) or fp32_flat_groups (ZeRO 3), ...}
//
// ZeRO 1 and 2: per param group, the ranks' partitions concatenated in rank order are the group's parameters
// flattened one after the other, each followed by its count of zeros in rank 0's param_alignment_paddings
// [group][param] (zero_optimization.parameter_alignment; absent before DeepSpeed wrote it), then padding to a multiple
// of 2 x world size (DeepSpeed 0.19 saves the partitions without it: the last rank's is shorter). ZeRO 3: each
// parameter is split on its own: ceil(numel / world size) elements per rank, the last padded; a rank's groups
// concatenated hold its slices of every parameter in order. The optimizer's own state_dict (base_optimizer_state for
// ZeRO 1 and 2: {state: {G: {step, exp_avg, ...}}, param_groups} or, elastic, one state per group; for ZeRO 3
// optimizer_state_dict.optimizer_state_dict) holds per group the moments of that rank's flat partition, laid out
// as it is (plus the padding), and scalar counters (Adam's step).
//
// The tensors, as zero_to_fp32 gives them: the buffers (role buffer), the parameters' fp32 master values in
// param_shapes' order (weight), the shared parameters' aliases (role alias of their target, whose action and values
// they take); then what the optimizer holds: per parameter and moment `optimizer/NAME/KEY` (optimizer state, cut from
// the partitions as the master values are) and per scalar key `optimizer/KEY` (a counter: every rank's and group's,
// which must agree). The torch.save files are read by pytorch's zip parser and restricted unpickler (DeepSpeed's
// ZeroStageEnum, LossScaler and fragment_address as values). Distrusted: the number of optim files against
// partition_count, each partition's dtype (float32) and extent inside its storage and file, each moment's length
// against its partition's, the paddings' counts (one per group, one per parameter, the same on every rank, none
// negative or past the partitions), and the parameters' total against the partitions' (zero_to_fp32's sanity check).
// Every name once: a buffer, parameter or shared_params alias repeating one is refused (zero_to_fp32 would overwrite
// the first one's values; DeepSpeed never writes that). Refused: model-parallel checkpoints (mp_rank_01...) and frozen
// parameters (not read yet).
//
// The writer makes a checkpoint folder in input 1's layout (the same files, ranks and partitioning): input 1's files
// copied less the tensors' bytes (pytorch/copied_files.hpp), every tensor written where the reader found it, and into
// its mirrors: the module's copy of each parameter in the model states file (in the module's dtype: bf16, fp16 or fp32,
// rounded to nearest even), a ZeRO 3 buffer in every rank's model states file, a counter in every rank's and group's
// state. An alias writes only the module copies that are its own (its target writes the master); where the inputs
// disagree on the tie, the one master cannot hold two means: refused (exit 3). Each touched storage's CRC-32 is
// computed from the bytes written. What is no tensor (global_steps, the param_groups' lr, the loss scaler) stays input
// 1's. DeepSpeed's loaders take the folder above and a tag: engine.load_checkpoint(DIR, tag=NAME) and zero_to_fp32's
// get_fp32_state_dict_from_zero_checkpoint(DIR, tag=NAME) for an output DIR/NAME/. wavg.json beside the files (which
// DeepSpeed ignores) holds the provenance.

#include <memory>
#include <string>
#include <vector>

#include "listed_reader.hpp"
#include "pytorch/zip_layout.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg::deepspeed {

class DeepspeedReader final : public ListedReader {
 public:
  // Opens a checkpoint folder, or the folder above whose `latest` names one. Throws Error (exit 1) naming the file.
  explicit DeepspeedReader(const std::string& path);

  std::vector<std::string> files() const override { return m_paths; }
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override;
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void release(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  std::vector<std::uint64_t> boundaries(std::size_t index) const override;
  std::vector<std::string> kept_entries() const override { return m_kept; }

  // A stretch of a tensor's elements lying consecutively in one file.
  struct Piece {
    std::size_t file = 0;
    std::uint64_t at = 0;     // file offset of its first element
    std::uint64_t count = 0;  // elements
  };
  // A whole second copy of a tensor, contiguous, in `dtype` (the module's bf16 copy of a parameter).
  struct Mirror {
    std::size_t file = 0;
    std::uint64_t at = 0;
    DType dtype = DType::f32;
  };

  // The checkpoint folder read (the one `latest` names, when the folder above was given).
  const std::string& folder() const { return m_folder; }
  const MappedFile& file(std::size_t f) const { return *m_files[f]; }
  const std::vector<Piece>& pieces(std::size_t index) const { return m_pieces[index]; }
  const std::vector<Mirror>& mirrors(std::size_t index) const { return m_mirrors[index]; }
  // Lists the storage entries of file `f` that hold the tensors' values or mirrors (for a writer's CRC-32s).
  const std::vector<pytorch::ZipEntry>& storages(std::size_t f) const { return m_storages[f]; }

 private:
  struct Build;  // the constructor's steps (deepspeed_reader.cpp)
  // Calls f(piece, its first element, elements, elements done before) for each stretch of a piece that
  // [offset, offset + count) of tensor `index` covers, in order.
  template <typename F>
  void for_pieces(std::size_t index, std::uint64_t offset, std::uint64_t count, F f) const;

  std::string m_folder;
  std::vector<std::string> m_paths;
  std::vector<std::unique_ptr<MappedFile>> m_files;
  std::vector<std::vector<Piece>> m_pieces;    // per tensor, in element order
  std::vector<std::vector<Mirror>> m_mirrors;  // per tensor
  std::vector<std::vector<pytorch::ZipEntry>> m_storages;
  std::vector<std::string> m_kept;
};

// Tells whether `path` is a folder holding *_model_states.pt, or one whose `latest` file names such a folder.
bool looks_like_deepspeed(const SniffInput& input);

std::unique_ptr<Writer> create_deepspeed_writer(const std::string& tmp_dir, const std::string& display_path,
                                                const OutputSpec& spec);

}  // namespace wavg::deepspeed
