#pragma once
// What a file that no codec claims is, for the error message: a user who hands wavg a PyTorch pickle, a Keras
// architecture JSON or a Hugging Face index learns what the file is, not just that its first bytes were odd.
//
// Told by content (first bytes, zip entry names, JSON members), never by extension:
//   zip holding .../data.pkl              PyTorch checkpoint (torch.save since 1.6)
//   80 02 8a 0a 6c fc 9c 46 f9 20 6a a8   legacy PyTorch checkpoint (torch.save before 1.6: pickle + magic number)
//   80 02..05                             a Python pickle
//   93 'NUMPY'                            a NumPy .npy array
//   'GGUF'                                a GGUF model (llama.cpp)
//   JSON object with weight_map           Hugging Face sharded-checkpoint index (model.safetensors.index.json)
//   JSON object with class_name + config  Keras model architecture (model.to_json()), no weights
//   JSON object with modelTopology        TensorFlow.js model.json without a weightsManifest

#include <string>

namespace wavg {

// Returns the error text for a file no codec reads: "not a checkpoint wavg can read: it is ..." naming its kind
// when it is a known one, else the first bytes it held.
std::string describe_unknown(const std::string& path);

}  // namespace wavg
