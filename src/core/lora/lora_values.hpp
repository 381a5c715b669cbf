#pragma once
// A tensor's values as doubles and back, and a 2-D tensor as an Eigen matrix: what the LoRA operations compute in.

#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "wavg/format.hpp"

namespace wavg {

using Mat = Eigen::MatrixXd;
using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Reads `count` elements of float tensor `index` from `offset` as doubles (exact for every float dtype).
std::vector<double> read_values(Reader& r, std::size_t index, std::uint64_t offset, std::uint64_t count);
// Writes `count` doubles to `dst` in `dtype`, each rounded once.
void store_values(const double* v, std::uint64_t count, DType dtype, void* dst);
// Reads a 2-D float tensor whole.
Mat read_matrix(Reader& r, std::size_t index);

}  // namespace wavg
