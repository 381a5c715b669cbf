#pragma once
// HDF5 checkpoints.
//
// On disk (HDF5 file format spec, superblock v0..v3): an 8-byte signature 89 48 44 46 0d 0a 1a 0a at offset 0 (or
// 512, 1024, 2048, ... after a user block), then a tree of groups, datasets and attributes. wavg reads three
// layouts of that tree (keras_layout.hpp has the Keras ones byte for byte):
//
//   Keras 2 model (model.save):   model_weights/ with attr layer_names, each layer's weight_names; optimizer_weights/
//   Keras 2 weights (save_weights): the model_weights layout at the root (root attr layer_names)
//   Keras 3 weights (.weights.h5): groups layers/, vars/, optimizer/, ...; each object's variables in vars/0, 1, ...
//                                 and its sub-objects in attribute-named groups, to any depth
//   plain HDF5:                    every numeric dataset, named by its full path, in name order
//
// Coverage: after a Keras layout's own rules, every numeric dataset they did not list (top_level_model_weights,
// a stray dataset, a sub-object of a kind no rule knew) is read as a tensor named by its full path, so that a
// merge averages it rather than keep input 1's values for it unnoticed.
//
// layer_names and weight_names are fixed- or variable-length strings depending on the h5py version that wrote
// them, and may be split into layer_names0, layer_names1, ... when long. The datasets are the tensors; their
// names are full paths without the leading slash.
//
// Groups and datasets are found by wavg's own parser of the file's structure (native_index.hpp) where the file keeps
// to what the HDF5 library writes by default (superblock v0/v1, old-style groups, contiguous datasets of plain
// little-endian numbers): the library costs about 40 us of CPU per dataset it opens. The library walks every other
// file, opens every dataset the parser does not read whole (chunked, filtered, converted), and reads every
// attribute (layer_names, weight_names, the root's metadata) in all files.
//
// A tensor must live in this file: external storage, virtual datasets and external links on its path are refused
// (h5.hpp), as are contiguous data overlapping the superblock, an object header or another dataset's data, and
// datasets over 64 MiB that were never written (a few bytes of file can declare terabytes).
//
// Contiguous, unfiltered datasets whose file type equals the native memory type are read straight from the file
// at the dataset's offset (checked against the file's size): view() hands out pointers into a read-only mapping of
// the whole file, read() uses pread(); everything else goes through H5Dread. A mapping only reserves address space:
// pages enter the process's resident memory when a block touches them and leave again on release(), so resident
// memory stays at one block per input for any file size.

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hdf5/h5.hpp"
#include "hdf5/keras_layout.hpp"
#include "hdf5/keras_optimizer.hpp"
#include "hdf5/native_index.hpp"
#include "listed_reader.hpp"
#include "wavg/format.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg {

class Hdf5Reader final : public ListedReader {
 public:
  // Whether to open the file's structure in a child process first (structure_probe.hpp).
  enum class Probe { no, yes };
  // How to find the file's groups and datasets: `native` reads them with wavg's own parser (native_index.hpp) where
  // the file keeps to what it knows, and through the HDF5 library otherwise; `library` always through the library
  // (the tests compare the two).
  enum class Walk { native, library };
  explicit Hdf5Reader(std::string path, Probe probe = Probe::yes, Walk walk = Walk::native);
  // Opens `path` as Probe::no and Walk::native do, the native parser reading `mapping` (of `path`): the structure
  // probe's child maps the file before it limits its own memory, a mapping being address space, not memory.
  Hdf5Reader(std::string path, MappedFile mapping);
  // Opens `path` taking `structure` (what structure() returned in the probe's child) for what the file holds,
  // instead of walking it; throws Error naming `path` when the answer is damaged.
  Hdf5Reader(std::string path, std::string_view structure);
  ~Hdf5Reader() override;

  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override;
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void release(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  ModelLayers model_layers() const override { return m_layers; }
  // Gives the Keras 3 optimizer variables the roles a .keras archive's config.json settles (keras_optimizer.hpp).
  void set_keras3_optimizer(const keras::OptimizerConfig& config);

  // Returns the file offset of a contiguous, unfiltered, native-typed tensor's data, or -1 when it must go through
  // H5Dread. Used by the HDF5 writer to patch a byte copy of this file in place.
  std::int64_t direct_offset(std::size_t index) const { return m_entries[index].direct_offset; }
  // Tells whether the file's Keras layout names tensor `index` (a layer's weight_names, a vars/N, the optimizer's
  // list): a copy of the file without it would not read back, nor load in Keras.
  bool listed_by_layout(std::size_t index) const { return m_entries[index].listed; }
  // Returns what the constructor found (layout, metadata, layers, tensors, where each one's data lies) as the bytes
  // the structure probe hands its parent (structure_handoff.cpp).
  std::string structure() const;
  // Tells whether the groups and datasets were found by wavg's own parser (Walk::native on a file it knows).
  bool walked_natively() const { return m_walked_natively; }

 private:
  struct Entry {
    h5::Handle dataset;
    h5::Handle mem_type;
    std::int64_t direct_offset = -1;
    bool listed = false;  // named by the Keras layout (weight_names, vars/N), not found by the coverage walk
  };

  // Opens the file, adopting `structure` when there is one, else walking it.
  void open(std::optional<std::string_view> structure);
  // Opens m_fd and m_file.
  void open_file();
  // Refuses a superblock that names a driver information block (hdf5_reader.cpp says why).
  void check_driver_block() const;
  void open_tree();
  // Reads the file's groups and datasets with wavg's own parser into m_native, where the file allows.
  void read_native();
  // Takes the structure a probe's child found (structure()) instead of walking the file again.
  void adopt_structure(std::string_view answer);
  // Opens tensor `index`, which goes through H5Dread, by its path and checks it is what the probe's child found.
  void open_again(std::size_t index);
  void read_metadata();
  void close_handles();
  void add_found(keras::FoundModel model);
  void add_uncovered();
  void add_uncovered_natively();
  // Whether the layout names a dataset (so it must be numeric) or a walk of the whole file found it.
  enum class Listed { no, yes };
  // Gives a Keras file's optimizer variables their roles (counter, hyper-parameter, optimizer state).
  void set_keras_roles();
  // Adds a numeric dataset as a tensor; returns false for what is not one (strings, empty datasets).
  bool add_dataset(const std::string& name, Listed listed);
  // Adds the open dataset `ds` named `name` as add_dataset does.
  bool add_opened(h5::Handle ds, const std::string& name, Listed listed);
  // Adds a dataset the native index read whole (known) as add_opened would, without the library.
  bool add_native(const h5native::Dataset& d, const std::string& name, Listed listed);
  struct TreeWalk;  // tree_walk.cpp
  bool note_header(TreeWalk& walk, const H5O_info_t& info, const std::string& name);
  void walk_group(TreeWalk& walk, hid_t group, const std::string& prefix, int depth);
  // Refuses a dataset of more than k_max_unwritten bytes whose storage was never (or only partly) written.
  void check_allocated(hid_t dataset, const std::string& name, std::uint64_t bytes) const;
  // Refuses contiguous data that overlaps another dataset's data, an object header or the superblock.
  void check_data_ranges();
  void map_file();
  // Returns the file byte range [begin, end) of a direct tensor's elements, or false when it is not direct.
  bool direct_range(std::size_t index, std::uint64_t offset, std::uint64_t count, std::uint64_t& begin,
                    std::uint64_t& end) const;

  h5::Handle m_file;
  int m_fd = -1;
  std::uint64_t m_file_size = 0;
  std::optional<MappedFile> m_map;  // the whole file, or empty when mmap() failed (read() still works)
  std::vector<Entry> m_entries;
  using ByteSpan = std::pair<std::uint64_t, std::uint64_t>;     // [begin, end) in the file
  std::vector<std::pair<ByteSpan, std::size_t>> m_data_ranges;  // contiguous data -> tensor index
  // A byte range of the file's metadata, called `what` followed by `name` (a path in m_header_names or, while
  // open_tree() runs, in the native index): built only when a message needs it.
  struct Metadata {
    ByteSpan span;
    const char* what;
    std::string_view name;
  };
  std::vector<Metadata> m_headers;  // the superblock and object headers (and, read natively, B-trees and heaps)
  std::deque<std::string> m_header_names;
  ModelLayers m_layers;
  Walk m_walk = Walk::native;
  std::optional<h5native::Index> m_native;  // while open_tree() runs, when the native parser read the file
  bool m_walked_natively = false;
};

// Tells whether the first bytes of a file carry the HDF5 signature (at 0 or after a user block).
bool looks_like_hdf5(const SniffInput& input);

}  // namespace wavg
