#pragma once
// Scoring saved built-in MLPs (wavg eval, wavg barrier): the model is rebuilt from a checkpoint's tensors and scored
// on the same held-out rows local-sgd scores on.

#include <string>

#include "train/dataset.hpp"
#include "train/mlp.hpp"

namespace wavg::train {

// Loads `path`'s CSV and returns its test split, scaled as local-sgd scales it (by the training split's range).
Dataset load_test_split(const std::string& path, int label_col, double test_fraction);

// Rebuilds a built-in MLP from a checkpoint holding dense/kernel, dense/bias, dense_1/kernel, ... (what local-sgd
// writes, and merges of such files); throws Error(incompatible) when the layers do not chain or do not fit `data`.
Mlp load_mlp(const std::string& path, const Dataset& data);

// Returns (1 - t) a + t b, layer by layer.
Mlp interpolate(const Mlp& a, const Mlp& b, double t);

}  // namespace wavg::train
