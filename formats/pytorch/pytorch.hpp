#pragma once
// PyTorch checkpoints written by torch.save, in both of its layouts.
//
// Zip format (torch >= 1.6): a zip archive (zip_layout.hpp) of stored entries under one top folder of any name:
//
//   TOP/data.pkl              the pickled object (a state_dict, or a dict nesting state_dicts and plain values);
//                             tensors appear as _rebuild_tensor_v2(storage, offset, size, stride, ...), each
//                             storage as the persistent id ('storage', torch.FloatStorage, KEY, 'cpu', numel)
//   TOP/data/KEY              the storage's bytes, numel x element size, little-endian (torch pads entries so the
//                             data starts at a multiple of 64)
//   TOP/version               "3\n" (and sometimes .format_version, .storage_alignment, byteorder "little",
//                             .data/serialization_id)
//   TOP/wavg.json             wavg's provenance (an entry torch ignores); read back as metadata
//
// Legacy format (torch < 1.6): the concatenation of
//
//   pickle  the magic number 0x1950a86a20f9469cfc6c
//   pickle  the protocol version 1001
//   pickle  sys_info {"protocol_version": 1001, "little_endian": True, "type_sizes": {...}}
//   pickle  the object, persistent ids ('storage', Class, KEY, location, numel, view_metadata or None)
//   pickle  the list of storage KEYs, in the order their data follows
//   per KEY u64 numel (little-endian), then numel x element size bytes
//
// The pickles are read by the restricted unpickler (pickle.hpp): nothing is imported or run. A tensor is named by
// its key path through dicts and lists (model.conv1.weight, optimizer.state.0.exp_avg), or in a whole-model
// pickle (torch.save(model)) by its attribute path as the model's state_dict names it (conv1.weight); every other leaf
// (epoch, loss, hyper-parameters, None) is kept from input 1 and listed by kept_entries(). Roles come from the
// structure: an optimizer's state_dict (a dict holding `state` and `param_groups`) gives optimizer state (its
// per-parameter `step`, a float tensor since torch 1.12, is a counter) and hyper-parameters (tensors in param_groups);
// a whole model's `_parameters` are weights and `_buffers` buffers (num_batches_tracked, torch's own buffer name, a
// counter); a tensor whose storage, offset, shape and stride equal an earlier one's is an alias of it (weight
// tying). A view lies wholly inside its storage (checked). Contiguous tensors are served from the memory mapping
// (view()); others (a Fortran-order tensor) are gathered element by element.
//
// The writer keeps input 1's layout when input 1 is a PyTorch file: a zip input's entries are copied in order
// (data.pkl byte for byte, so nested dicts, optimizer state and epoch stay), its storages overwritten where the
// output's tensors lie, and TOP/wavg.json added; a legacy input keeps its layout, its bytes copied except where
// the output's contiguous tensors lie, which the engine writes (the legacy format has no place for provenance). With
// any other input 1 it writes a plain state_dict (an OrderedDict of tensors, one storage each, top folder "archive")
// that torch.load(weights_only=True) accepts.

#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/index_table.hpp"
#include "listed_reader.hpp"
#include "pytorch/pickle.hpp"
#include "pytorch/zip_layout.hpp"
#include "wavg/format.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg::pytorch {

enum class Container { zip, legacy };

// Where one tensor's elements lie in the file.
struct Placement {
  std::size_t entry = 0;              // zip: the storage's index in entries()
  std::uint64_t begin = 0;            // file offset of the tensor's first element
  std::vector<std::uint64_t> stride;  // in elements
  bool contiguous = true;             // row-major without gaps: element i at begin + i x element size
};

class PytorchReader final : public ListedReader {
 public:
  explicit PytorchReader(std::string path);

  std::string layout() const override;
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override;
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void release(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  std::vector<std::string> kept_entries() const override { return m_kept; }

  Container container() const { return m_container; }
  const std::string& top() const { return m_top; }
  const std::vector<ZipEntry>& entries() const { return m_entries; }
  const MappedFile& file() const { return m_file; }
  const Placement& placement(std::size_t index) const { return m_placements[index]; }

 private:
  struct StorageData {
    std::string key;
    std::size_t entry = 0;
    std::uint64_t offset = 0, bytes = 0;  // in the file
    bool viewed = false;                  // a tensor named so far views it
  };
  // What makes two tensors one view (an alias): the same storage, element offset, dtype, shape and stride.
  struct ViewKey {
    std::uint32_t storage;  // in m_storages
    std::uint64_t offset;   // in elements
  };
  // Adds a storage under `key`; returns false when the key is taken.
  bool add_storage(StorageData data);
  StorageData* find_storage(const std::string& key);
  void open_zip();
  void open_legacy();
  void name_tensors(const Value& root);
  void walk(const Value& v, const std::string& name, int depth);
  // Tells whether a list or tuple holds a tensor at any depth (then its items are named one by one).
  bool holds_tensor(const Value& v, int depth);
  void walk_object(const Value& v, const std::string& name, int depth);
  void add_tensor(const Value& v, const std::string& name);
  Role role_here(const std::string& name) const;

  MappedFile m_file;
  Container m_container = Container::zip;
  std::string m_top;
  std::vector<ZipEntry> m_entries;
  std::vector<Pickle> m_pickles;  // kept alive: the tensors' values point into them
  std::vector<StorageData> m_storages;
  IndexTable m_storage_keys;  // m_storages by key
  std::vector<Placement> m_placements;
  std::vector<std::string> m_kept;
  std::string m_shape;  // "state_dict" or "checkpoint", for layout()
  std::uint64_t m_visits = 0;
  std::uint64_t m_tensor_bytes = 0;   // the tensors named so far, in bytes
  std::uint64_t m_storage_bytes = 0;  // the storages they view, each once
  bool m_whole_model = false;         // the pickle holds objects (torch.save(model))
  IndexTable m_names;                 // m_tensors by name, so that each new one is checked in constant time
  std::unordered_map<const Value*, std::string> m_reached;  // containers walked, with the name of the first path
  std::unordered_map<const Value*, bool> m_holds;           // holds_tensor's answers, per value
  int m_attributes = 0;                                     // > 0 while walking an object's plain attributes
  Role m_role = Role::unknown;       // what the structure being walked says its tensors are (see walk)
  IndexTable m_views;                // m_tensors by view (ViewKey and TensorInfo): the first tensor of each view
  std::vector<ViewKey> m_view_keys;  // per tensor, while naming
};

// Tells whether a file is a torch.save zip archive (its first entry TOP/data.pkl) or starts with the legacy magic.
bool looks_like_pytorch(const SniffInput& input);

// Appends the pickle of tensor `t` as torch.save writes it, its storage the persistent id KEY `key` holding its
// elements, row-major (a .pt output's state_dict, a DCP output's per-tensor archive).
void pickle_tensor(std::string& out, const TensorInfo& t, const std::string& key);

std::unique_ptr<Writer> create_pytorch_writer(const std::string& tmp_path, const std::string& display_path,
                                              const OutputSpec& spec);

}  // namespace wavg::pytorch
