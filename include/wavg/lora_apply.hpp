#pragma once
// Folding a LoRA adapter into its base model (PEFT's merge_and_unload): each adapted module's weight W becomes
// W + s * B * A, or with DoRA m * (W + s * B * A) / ||W + s * B * A|| (the norm of each output row, as peft's
// get_weight_norm takes it), and each module of modules_to_save replaces the base's. The result is a Reader over
// the base that computes the adapted rows as they are read, so the fold streams with flat memory.

#include <memory>

#include "wavg/format.hpp"

namespace wavg {

// Returns the base with `adapter` (a PEFT adapter's reader, or an aggregate of several) folded in. Checks first
// that every module and saved module has its tensor in the base (the module's name less peft's
// "base_model.model." and with ".weight" after it), float and of the shape the factors give, listing every
// mismatch in one Error (exit 3). Both readers must outlive the result.
std::unique_ptr<Reader> fold_lora(Reader& base, Reader& adapter);

}  // namespace wavg
