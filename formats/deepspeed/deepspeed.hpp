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
// flattened one after the other (param_alignment_paddings between them when present), then padding to a multiple
// of 2 x world size. ZeRO 3: each parameter is split on its own: ceil(numel / world size) elements per rank, the
// last padded; a rank's groups concatenated hold its slices of every parameter in order. The tensors are the
// buffers, then the parameters in param_shapes' order, then the shared parameters' aliases, as zero_to_fp32 gives
// them. The torch.save files are read by pytorch's zip parser and restricted unpickler (ZeroStageEnum as a value).
// Distrusted: the number of optim files against partition_count, each partition's dtype (float32) and extent
// inside its storage and file, and the parameters' total against the partitions' (zero_to_fp32's sanity check).
// Refused: model-parallel checkpoints (mp_rank_01...) and frozen parameters (not read yet).

#include <memory>
#include <string>
#include <vector>

#include "listed_reader.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg::deepspeed {

class DeepspeedReader final : public ListedReader {
 public:
  // Opens a checkpoint folder, or the folder above whose `latest` names one. Throws Error (exit 1) naming the file.
  explicit DeepspeedReader(const std::string& path);

  std::vector<std::string> files() const override { return m_paths; }
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override;

  // A stretch of a tensor's elements lying consecutively in one file.
  struct Piece {
    std::size_t file = 0;
    std::uint64_t at = 0;     // file offset of its first element
    std::uint64_t count = 0;  // elements
  };

 private:
  std::vector<std::string> m_paths;
  std::vector<std::unique_ptr<MappedFile>> m_files;
  std::vector<std::vector<Piece>> m_pieces;  // per tensor, in element order
};

// Tells whether `path` is a folder holding *_model_states.pt, or one whose `latest` file names such a folder.
bool looks_like_deepspeed(const SniffInput& input);

}  // namespace wavg::deepspeed
