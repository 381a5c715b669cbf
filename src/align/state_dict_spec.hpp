#pragma once
// The permutation spec of a PyTorch state_dict (a .pt/.pth/.bin file, or a safetensors file of one), inferred from
// its tensors' names and shapes when they describe a plain chain of Linear, Conv and BatchNorm layers.

#include "wavg/align.hpp"

namespace wavg::align {

// Tells whether the reader's format stores state_dicts (PyTorch, safetensors), whose names the inference reads.
bool is_state_dict_format(const Reader& reader);

// Infers the spec from the state_dict's names and shapes, taking the modules as a chain in order (the caller has
// the user's word for it: --assume-sequential). Throws a usage error (exit 2) naming the tensor where the
// chain cannot be read unambiguously, and pointing to --perm-spec.
PermSpec state_dict_spec(const Reader& reader);

}  // namespace wavg::align
