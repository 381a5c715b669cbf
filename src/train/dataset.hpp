#pragma once
// Labelled tabular data for the built-in trainer: a CSV file (plain or gzip) of numbers, one sample per row, one
// column the integer class label. Loading, the held-out test split, feature scaling and the split into worker shards.

#include <cstdint>
#include <string>
#include <vector>

#include "wavg/counter_rng.hpp"

namespace wavg::train {

struct Dataset {
  std::size_t features = 0;
  std::size_t classes = 0;      // labels are 0..classes-1
  std::vector<double> x;        // rows x features, row-major
  std::vector<std::int32_t> y;  // one label per row

  std::size_t rows() const { return y.size(); }
  // Returns the rows listed in `index`, in that order.
  Dataset subset(const std::vector<std::size_t>& index) const;
};

// How the training set is divided between workers.
enum class Shard { iid, label_sorted };

// Reads a CSV or gzip-compressed CSV (zlib reads both). `label_col` counts from 0; -1 means the last column.
// Throws Error naming the file and the line for anything that is not a number or a valid label.
Dataset load_csv(const std::string& path, int label_col);

// Splits rows into training and test sets: a fixed shuffle (independent of --seed, so every run of an experiment
// is scored on the same rows), the last `test_fraction` of it held out.
void split_train_test(const Dataset& all, double test_fraction, Dataset& train, Dataset& test);

// Scales every feature to [0, 1] by the minimum and maximum seen in `train`, applied to both sets.
void scale_features(Dataset& train, Dataset& test);

// Divides `train` into `workers` shards of equal size (up to workers-1 rows are left out). iid: a shuffle by `seed`;
// label_sorted: rows sorted by label, cut into 2*workers pieces, and each worker given two pieces at random, so
// each sees few classes (McMahan et al. 2017's pathological non-IID split).
std::vector<Dataset> make_shards(const Dataset& train, std::size_t workers, Shard shard, std::uint64_t seed);

// The counter-based generator (wavg/counter_rng.hpp), as the trainer has always named it.
using wavg::hash_key;
using wavg::mix64;
using wavg::permutation;
using wavg::unit_double;

}  // namespace wavg::train
