#pragma once
// Provenance: what every file wavg writes records about how it was made. The entries are plain strings so that
// every format can hold them (HDF5 root attributes, safetensors __metadata__, wavg JSON metadata):
//   wavg_version  "0.1.0"
//   wavg_command  "merge" / "convert"
//   wavg_method   "mean", "weighted mean (weights 1,3)", "copy"
//   wavg_inputs   JSON array [{"file": "runs/a/best.keras", "xxh3_128": "..."}, ...], each input as given on the
//                 command line (two best_model.keras of different runs stay apart); the digest covers every file
//                 the input consists of, concatenated in order (a TF.js model.json, then its shards in manifest
//                 order), and its member is named after its algorithm: "xxh3_128" (the default, 32 hex digits) or
//                 "sha256" (--hash sha256, 64 hex digits); only "file" with --hash none
//   wavg_base     only for a merge with --base (task vectors, federated server steps): the base the inputs are
//                 taken relative to, as one JSON object in the style of a wavg_inputs item: {"file": "base.h5",
//                 "xxh3_128": "..."}; the inputs alone do not reproduce such a merge
//   wavg_out_dtype  only when --out-dtype was given
//   wavg_recipe   only for merge --recipe: the mergekit YAML, as given
//
// Hashing every input with SHA-256 costs as much CPU as the merge itself (about 1.5 GB/s a core; XXH3-128, the
// default, runs about ten times faster but is no defence against a forged collision), so hashing runs
// on threads of its own while the merge runs, and writers ask for the entries only in finish(). A writer that lays
// out its header before the data (safetensors) uses layout_entries(), whose values have exactly the final lengths,
// and rewrites the header in place at the end.
//
// Each input has a hash thread that follows the engine through the file (note_read_progress, which the subcommand
// connects to Engine::on_progress), at most 64 MiB
// ahead of it: the hash reads the pages the merge has just read, so when the inputs do not fit in the page cache
// every byte still comes from disk once, not twice. Once the writer asks for the entries, hashing runs freely.

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace wavg {

// Per input, the files it consists of, the first as given on the command line (Reader::files()).
using InputFiles = std::vector<std::vector<std::string>>;

// How inputs are fingerprinted in the provenance (--hash).
enum class HashAlgo { xxh3_128, sha256, none };
// Returns the name the provenance records the digest under: "xxh3_128", "sha256" (or "none").
const char* hash_algo_name(HashAlgo algo);

// Returns the lower-case hex digest of a file's bytes (XXH3-128 in canonical big-endian order, as xxhsum -H2 prints
// it). Throws Error (exit 1) naming the file if it cannot be read.
std::string hash_file(HashAlgo algo, const std::string& path);
// Returns the lower-case hex SHA-256 of a file's bytes.
std::string sha256_file(const std::string& path);

// Which inputs one process of a distributed merge fingerprints: input i (the --base input counting last) when
// i % parts == part. A digest covers a whole input and cannot be split, so the ranks share the inputs instead, each
// read whole by one rank, and join the digests before the output's header is written (Provenance::join_digests).
struct HashShare {
  std::size_t part = 0, parts = 1;
};

class Provenance {
 public:
  // No provenance: writers record nothing.
  Provenance() = default;
  // Fixed entries, nothing to hash.
  Provenance(std::map<std::string, std::string> entries);  // NOLINT: a map converts, as in tests
  // Starts hashing `inputs` (and `base`, the files of the --base input, when not empty) in the background at once,
  // unless `hash` is none.
  Provenance(const std::string& command, const std::string& method, const InputFiles& inputs,
             const std::string& out_dtype, HashAlgo hash = HashAlgo::xxh3_128,
             const std::vector<std::string>& base = {}, HashShare share = {});

  bool empty() const { return !m_state; }
  // Adds a fixed entry (wavg_recipe: the mergekit YAML a merge ran), before any writer asks for the entries.
  void add(const std::string& key, const std::string& value);
  // The entries, waiting for the hashes; rethrows a hashing error (naming the file).
  std::map<std::string, std::string> entries() const;
  // The entries with every digest written as zeros: the same keys and value lengths as entries(), at once.
  std::map<std::string, std::string> layout_entries() const;
  // Returns the digests this process computed (HashShare; "" for the others' and with --hash none), waiting for
  // them; rethrows a hashing error (naming the file).
  std::vector<std::string> own_digests() const;
  // Takes the digests other processes computed: `digests[i]`, where not empty, is input i's.
  void join_digests(const std::vector<std::string>& digests) const;
  // Lets the hash threads read up to `done` of `total` bytes of the plan (the engine's progress; tensors lie in the
  // files in about plan order), plus their lead. The furthest point any pass reached counts.
  void note_read_progress(std::uint64_t done, std::uint64_t total) const;

 private:
  struct State;
  std::shared_ptr<State> m_state;
};

// Builds the provenance of an output made by `command` with `method` from `inputs`, and starts hashing them.
Provenance make_provenance(const std::string& command, const std::string& method, const InputFiles& inputs,
                           const std::string& out_dtype, HashAlgo hash = HashAlgo::xxh3_128,
                           const std::vector<std::string>& base = {}, HashShare share = {});
// The same for inputs of one file each.
Provenance make_provenance(const std::string& command, const std::string& method,
                           const std::vector<std::string>& inputs, const std::string& out_dtype,
                           HashAlgo hash = HashAlgo::xxh3_128);

}  // namespace wavg
