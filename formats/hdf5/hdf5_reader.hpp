#pragma once
// HDF5 checkpoints.
//
// On disk (HDF5 file format spec, superblock v0..v3): an 8-byte signature 89 48 44 46 0d 0a 1a 0a at offset 0 (or
// 512, 1024, 2048, ... after a user block), then a tree of groups, datasets and attributes. wavg reads three
// layouts of that tree:
//
//   Keras 2 model (model.save):   root attrs backend, keras_version, model_config, training_config
//                                 model_weights/            attr layer_names = [L...]
//                                   L/                      attr weight_names = [W...] (empty float64 if none)
//                                     W                     the dataset (W usually "L/kernel:0")
//                                   top_level_model_weights/  not listed in layer_names: ignored
//                                 optimizer_weights/        attr weight_names = [O...], datasets at O
//   Keras 2 weights (save_weights): the model_weights layout at the root (root attr layer_names)
//   Keras 3 weights (.weights.h5): no root attributes;
//                                 layers/L/vars/0, 1, ...   a layer's variables, indices sorted numerically
//                                 layers/L/layers/...       nested models, recursively
//                                 optimizer/vars/0, 1, ...  iteration count, learning rate, then slots
//                                 vars/...                  the model's own variables (usually empty)
//   plain HDF5:                    every numeric dataset, named by its full path, in name order
//
// layer_names and weight_names are fixed- or variable-length strings depending on the h5py version that wrote
// them, and may be split into layer_names0, layer_names1, ... when long. The datasets are the tensors; their
// names are full paths without the leading slash.
//
// Contiguous, unfiltered datasets whose file type equals the native memory type are read straight from the file
// at the dataset's offset (checked against the file's size): view() hands out pointers into a read-only mapping of
// the whole file, read() uses pread(); everything else goes through H5Dread. A mapping only reserves address space:
// pages enter the process's resident memory when a block touches them and leave again on release(), so resident
// memory stays at one block per input for any file size.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hdf5/h5.hpp"
#include "wavg/format.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg {

class Hdf5Reader final : public Reader {
 public:
  // Whether to open the file's structure in a child process first (see probe_structure in the .cpp).
  enum class Probe { no, yes };
  explicit Hdf5Reader(std::string path, Probe probe = Probe::yes);
  ~Hdf5Reader() override;

  const std::string& path() const override { return m_path; }
  std::string format_name() const override { return "HDF5"; }
  std::string layout() const override { return m_layout; }
  const std::vector<TensorInfo>& tensors() const override { return m_tensors; }
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override;
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void release(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  std::map<std::string, std::string> metadata() const override { return m_metadata; }

  // Returns the file offset of a contiguous, unfiltered, native-typed tensor's data, or -1 when it must go through
  // H5Dread. Used by the HDF5 writer to patch a byte copy of this file in place.
  std::int64_t direct_offset(std::size_t index) const { return m_entries[index].direct_offset; }

 private:
  struct Entry {
    h5::Handle dataset;
    h5::Handle mem_type;
    std::int64_t direct_offset = -1;
  };

  void open_tree();
  void read_metadata();
  void close_handles();
  void add_keras_layers(hid_t parent, const std::string& prefix);
  void add_named_weights(hid_t group, const std::string& prefix, const std::vector<std::string>& names,
                         const std::string& owner);
  void add_keras3_tree(hid_t group, const std::string& prefix);
  void add_plain_tree();
  void add_dataset(const std::string& name, bool listed);
  void map_file();
  // Returns the file byte range [begin, end) of a direct tensor's elements, or false when it is not direct.
  bool direct_range(std::size_t index, std::uint64_t offset, std::uint64_t count, std::uint64_t& begin,
                    std::uint64_t& end) const;

  std::string m_path;
  std::string m_layout;
  h5::Handle m_file;
  int m_fd = -1;
  std::uint64_t m_file_size = 0;
  std::optional<MappedFile> m_map;  // the whole file, or empty when mmap() failed (read() still works)
  std::vector<TensorInfo> m_tensors;
  std::vector<Entry> m_entries;
  std::map<std::string, std::string> m_metadata;  // root attributes as text, read once with the structure
};

// Tells whether the first bytes of a file carry the HDF5 signature (at 0 or after a user block).
bool looks_like_hdf5(const std::string& path);

}  // namespace wavg
