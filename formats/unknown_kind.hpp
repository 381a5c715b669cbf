#pragma once
// What a file that no codec claims is, for the error message: a user who hands wavg a PyTorch pickle, a Keras
// architecture JSON or a Hugging Face index learns what the file is, not just that its first bytes were odd.
//
// Told by content (first bytes, zip entry names, JSON members), never by extension:
//   zip holding .../constants.pkl, code/  TorchScript archive (torch.jit.save)
//   zip holding .../data.pkl, not first   not laid out as torch.save writes (which the PyTorch codec reads)
//   80 02 8a 0a 6c fc 9c 46 f9 20 6a a8   legacy PyTorch checkpoint cut inside its magic number (the codec reads
//                                         whole ones)
//   80 02..05                             a Python pickle
//   93 'NUMPY'                            a NumPy .npy array
//   JSON object with weight_map           Hugging Face sharded-checkpoint index (model.safetensors.index.json)
//   JSON object with class_name + config  Keras model architecture (model.to_json()), no weights
//   JSON object with modelTopology        TensorFlow.js model.json without a weightsManifest

#include <string>

namespace wavg {

// Returns the error text for a file no codec reads: "not a checkpoint wavg can read: it is ..." naming its kind
// when it is a known one, else the first bytes it held.
std::string describe_unknown(const std::string& path);

// Tells whether a zip entry name is one only TorchScript archives hold (TOP/constants.pkl, TOP/code/__torch__/).
bool is_torchscript_entry(const std::string& name);
// Returns what a TorchScript archive is, for the error message.
std::string torchscript_kind();

}  // namespace wavg
