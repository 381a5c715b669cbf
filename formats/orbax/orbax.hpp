#pragma once
// Orbax checkpoints (orbax-checkpoint's PyTreeCheckpointHandler and StandardCheckpointer; what MaxText, T5X and
// flax.training's CheckpointManager save): a folder per step.
//
//   STEP/_CHECKPOINT_METADATA   JSON: item_handlers, timestamps, custom_metadata (wavg's provenance goes here)
//   STEP/_METADATA              JSON: {"tree_metadata": {"('params', 'Dense_0', 'kernel')": {"key_metadata":
//                               [{"key": "params", "key_type": 2}, ...], "value_metadata": {"value_type":
//                               "jax.Array" | "np.ndarray" | "scalar" | "None" | ..., "skip_deserialize",
//                               "write_shape"}}, ...}, "use_ocdbt", "use_zarr3", ...}: the PyTree in flattening
//                               order, each leaf's key path (key_type 1 a sequence index, 2 a dict key) and type
//   STEP/_sharding, array_metadatas/, commit_success.txt   (not needed to read)
//   and the arrays, one zarr array (zarr.hpp) per array leaf, named by its keys joined with '.'
//   ("opt_state.0.mu.Dense_0.kernel"), either
//     in one OCDBT store (ocdbt.hpp): STEP/manifest.ocdbt and data files under d/ and ocdbt.process_N/d/ (each
//       process writes its own store and the first merges their trees), keys "NAME/.zarray" or "NAME/zarr.json"
//       and "NAME/CHUNK"; the default since orbax-checkpoint 0.5;
//     or as folders: STEP/NAME/.zarray (or zarr.json) and STEP/NAME/CHUNK.
//   A CheckpointManager's step folder holds the item in a subfolder (STEP/default/_METADATA); a run folder holds
//   numbered steps (merge --last N).
//
// A tensor is named by its key path joined with '/' ("params/Dense_0/kernel", "opt_state/0/count"), the names the
// Flax codec gives the same TrainState, and gets its role as the Flax codec assigns it (assign_train_state_roles):
// params weights, batch_stats buffers, opt_state moments and optax's count a counter. Leaves stored as arrays
// ("scalar" leaves too: a Python step is a 0-d zarr array) are tensors; the rest (None, an optax EmptyState) are
// kept from input 1 (kept_entries). Every array's metadata is read at open; its chunks (the pieces each process
// wrote, a regular grid) are decompressed one at a time as the engine reads them, so memory holds a chunk per
// input, never a tensor, and an array written by several processes is assembled as DCP's chunks are.
//
// The writer makes an OCDBT checkpoint, Orbax's default, that orbax.checkpoint restores into the same PyTree:
// input 1's _METADATA (less the leaves left out; use_ocdbt true, use_zarr3 false) and _CHECKPOINT_METADATA (its
// custom_metadata holding the provenance), input 1's _sharding, and a store of plain files: data.ocdbt, holding
// every array's chunk (one chunk per array, stored uncompressed, so each output byte is written once, in place, as
// the engine streams it), its .zarray and the one B+tree leaf node naming them all, then manifest.ocdbt, placed
// last. No subfolder: AtomicDirectory places an existing output's files one rename each and never replaces a
// folder, so over an existing Orbax folder (--force) the old store's files, which the new manifest does not name,
// are retired by name (d/ and ocdbt.process_N/ data files and manifests, array_metadatas/process_N; removal.hpp's
// rule), and other files there stay. A CheckpointManager step (its item in a subfolder) is refused as the output:
// its item's folder is the output to give. An input 1 that is no Orbax checkpoint gets a tree of dicts from the
// tensor names.

#include <memory>
#include <string>
#include <vector>

#include "listed_reader.hpp"
#include "orbax/ocdbt.hpp"
#include "orbax/zarr.hpp"
#include "wavg/format.hpp"

namespace wavg::orbax {

// One array leaf: its zarr metadata and where its chunks lie.
struct Leaf {
  std::vector<std::string> keys;   // the key path
  std::string param;               // the keys joined with '.': the array's name in the store
  ZarrArray array;
};

class OrbaxReader final : public ListedReader {
 public:
  // Opens the step folder `path` (or a CheckpointManager step holding one item folder). Throws Error naming the
  // file at fault.
  explicit OrbaxReader(const std::string& path);
  ~OrbaxReader() override;

  std::vector<std::string> files() const override;
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override;
  std::vector<std::string> kept_entries() const override { return m_kept; }
  // Lists the '/'-joined key paths of the leaves of value type None (optax's EmptyState), which a Flax msgpack
  // output writes as the empty maps flax.serialization writes for them.
  std::vector<std::string> empty_nodes() const { return m_empty; }

  // The item folder (holding _METADATA).
  const std::string& item() const { return m_item; }
  // The step folder given (holding _CHECKPOINT_METADATA); the item folder itself for a StandardCheckpointer's.
  const std::string& step() const { return m_path; }
  const std::vector<Leaf>& leaves() const { return m_leaves; }

 private:
  // The stored bytes of chunk `chunk` (grid index) of leaf `t`, or an empty optional when it is not stored.
  std::optional<std::span<const unsigned char>> stored(std::size_t t, const Shape& chunk);
  // The decoded chunk, through a small cache of recently decoded chunks.
  const std::vector<unsigned char>& decoded(std::size_t t, const Shape& chunk);

  std::string m_item;
  std::vector<Leaf> m_leaves;
  std::vector<std::string> m_kept;
  std::vector<std::string> m_empty;  // the None leaves' names (optax's EmptyState)
  std::unique_ptr<OcdbtStore> m_store;  // null for per-leaf folders
  struct Cache;
  std::unique_ptr<Cache> m_cache;
};

// Tells whether `path` is a folder holding _METADATA, or _CHECKPOINT_METADATA and an item folder with _METADATA.
bool looks_like_orbax(const SniffInput& input);

// Writes an Orbax OCDBT checkpoint folder (layout above).
std::unique_ptr<Writer> create_orbax_writer(const std::string& tmp_dir, const std::string& display_path,
                                            const OutputSpec& spec);

}  // namespace wavg::orbax
