#pragma once
// Permutation alignment (weight matching, Ainsworth et al., "Git Re-Basin", ICLR 2023). Hidden units of networks
// trained from different initialisations are permuted relative to each other; weight matching finds, with no data,
// the permutation of each group of hidden units of B that best matches A, so that averaging them averages matching
// units. A permutation spec says which axes of which tensors each group permutes; it is inferred from the
// checkpoint's architecture (perm_spec.cpp) or read from a JSON file (--perm-spec).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wavg/format.hpp"

namespace wavg::align {

using Perm = std::vector<std::uint32_t>;  // new unit i is old unit perm[i]

// How one axis of a tensor is permuted: by `group`, or not at all (group < 0). An axis of length outer * n * inner,
// as a Dense kernel's input axis after a Flatten of n channels, holds the group's n units `outer` times, each unit
// repeated over `inner` consecutive entries: position (o * n + u) * inner + s. Keras flattens channels last (outer
// is the spatial size, inner 1), PyTorch channels first (outer 1, inner the spatial size).
struct AxisPerm {
  int group = -1;
  std::uint64_t outer = 1;
  std::uint64_t inner = 1;
};

// What role a permuted tensor plays: parameters decide the matching, optimizer slots (Adam's m and v) only follow.
enum class Role { parameter, slot };

struct TensorPerm {
  std::vector<AxisPerm> axes;  // one per axis of the tensor; empty: the tensor is not permuted
  Role role = Role::parameter;
  bool permuted() const;
};

struct PermSpec {
  std::vector<std::string> group_names;
  std::vector<std::uint64_t> group_sizes;
  std::vector<TensorPerm> tensors;  // indexed like the reader's tensors()
  std::string source;               // where the spec came from ("Keras model_config", "FILE.json")
};

// What the user said about where the spec comes from.
struct SpecSource {
  std::string file;  // --perm-spec: a JSON file giving the spec (empty: infer it)
  // --assume-sequential: a state_dict shows its modules but not how they connect (a skip connection or a
  // ConvTranspose leaves no trace in it), so reading it as a plain chain of its modules is the user's call.
  bool assume_sequential = false;
};

// Reads the spec from `source.file` when given, or infers it from the reader's architecture: a Keras model config
// of Dense, Conv, BatchNormalization, Add, Flatten and shape-preserving layers (the config states the graph); or,
// for PyTorch and safetensors files without one and only with `source.assume_sequential`, the names and shapes of
// a state_dict read as a Linear/Conv/BatchNorm chain in registration order. Throws a usage error (exit 2) saying
// what is missing when the structure cannot be inferred, and an incompatible error (exit 3) when a tensor's shape
// contradicts it.
PermSpec make_spec(const Reader& reader, const SpecSource& source);

// Checks that `other` has the tensors, dtypes and shapes `spec` was made for (exit 3 naming each mismatch).
void check_spec_fits(const PermSpec& spec, const Reader& reference, const Reader& other);

// The permuted tensors of one model as float32, for matching (other tensors are left empty). A float32 tensor the
// reader can view in its file's mapping is used in place, not copied, and matching releases its pages after each
// use: two 134M-parameter models copied took 1 GiB of the 1.5 GiB peak, and the page cache already holds them.
struct Weights {
  std::vector<std::vector<float>> tensors;  // copies (empty where `mapped` has the tensor)
  std::vector<const float*> mapped;         // in `reader`'s mapping, or null (any length: missing ones are null)
  std::vector<Shape> shapes;
  Reader* reader = nullptr;  // the reader `mapped` points into

  // Tells whether tensor t is held (a permuted parameter).
  bool holds(std::size_t t) const { return is_mapped(t) || !tensors[t].empty(); }
  // Returns tensor t's values, shapes[t] row-major.
  const float* data(std::size_t t) const { return is_mapped(t) ? mapped[t] : tensors[t].data(); }
  // Returns tensor t's element count.
  std::uint64_t count(std::size_t t) const;
  // Lets a mapped tensor's pages leave resident memory (they come back from the page cache when read again).
  void release(std::size_t t) const;

 private:
  bool is_mapped(std::size_t t) const { return t < mapped.size() && mapped[t]; }
};
Weights load_weights(Reader& reader, const PermSpec& spec);

struct MatchOptions {
  std::uint64_t seed = 1;
  std::size_t max_iter = 100;
  std::size_t restarts = 0;  // align_models: searches from different visiting orders, the best kept (0: auto)
};

struct MatchResult {
  std::vector<Perm> perms;     // one per group
  std::size_t iterations = 0;  // full passes over the groups, the last of which changed nothing
  bool converged = false;
};

// Finds the permutations of `b`'s groups that best match `a` (Ainsworth et al.'s weight matching), starting from
// `start` (identity when empty): groups are visited in an order drawn from the seed, each solved as a linear
// assignment on the summed products of the tensors it permutes, until a pass changes nothing or max_iter passes.
MatchResult weight_matching(const PermSpec& spec, const Weights& a, const Weights& b, const MatchOptions& options,
                            std::vector<Perm> start = {});

struct MergeManyResult {
  std::vector<std::vector<Perm>> perms;  // per model, per group
  std::size_t iterations = 0;
  bool converged = false;
};

// Aligns every model to the mean of the others in turn (MergeMany), until no permutation changes or max_iter rounds.
MergeManyResult merge_many(const PermSpec& spec, const std::vector<Weights>& models, const MatchOptions& options);

// Aligns models for averaging: two by weight matching of the second to the first, more by MergeMany. Weight
// matching is a coordinate ascent that ends in a local optimum depending on the visiting order, so the search runs
// `restarts` times from seeds drawn from options.seed, and keeps the result whose average has the largest squared
// norm over the permuted parameters: that is the sum of the aligned models' pairwise inner products, the quantity
// weight matching maximises, and on digits it ranks MergeMany's averages nearly as their accuracy does (README).
// Restarts 0 means 1 for two models (on digits it did not pick the better of two matchings) and 4 for more.
MergeManyResult align_models(const PermSpec& spec, const std::vector<Weights>& models, const MatchOptions& options);

// Returns `perm` applied to every permuted tensor of `weights` (for tests and MergeMany).
Weights permute_weights(const PermSpec& spec, const Weights& weights, const std::vector<Perm>& perms);

// Presents `base` with its units permuted by `perms`: every tensor read through it is the permuted tensor, byte for
// byte (one tensor is held in memory at a time).
std::unique_ptr<Reader> permuted_reader(Reader& base, const PermSpec& spec, std::vector<Perm> perms);

// Returns the identity permutation of every group.
std::vector<Perm> identity_perms(const PermSpec& spec);
// Counts the units `perm` moves.
std::size_t moved(const Perm& perm);

}  // namespace wavg::align
