#pragma once
// Test-only access to HDF5 files through the plain HDF5 C API, independent of wavg's codec: write small files with
// known values, read a dataset whole as double, and list datasets. Used to compute expected values without wavg.

#include <cstdint>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"

namespace wavg::test {

// Reads a whole numeric dataset, converted to double by the HDF5 library.
std::vector<double> read_doubles(const std::string& file, const std::string& dataset);
// Reads a whole dataset's raw bytes in its file type.
std::vector<unsigned char> read_bytes(const std::string& file, const std::string& dataset);
// Lists every dataset path in name order.
std::vector<std::string> list_datasets(const std::string& file);
// Writes a float32 dataset (creating the file, or adding to it) with the given 1-D or 2-D shape.
void write_floats(const std::string& file, const std::string& dataset, const std::vector<std::uint64_t>& shape,
                  const std::vector<float>& values, bool create);
// The shared real-checkpoint folder (../shared, or $WAVG_SHARED_DIR), or "" when it is absent (tests then skip).
std::string shared_dir();

}  // namespace wavg::test
