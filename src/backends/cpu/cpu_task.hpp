#pragma once
// The CPU implementations of the task-vector kernels declared in wavg/backend.hpp (same contracts).

#include <vector>

#include "wavg/backend.hpp"

namespace wavg::cpu {

void update_gram(const BlockInputs& in, double* gram);
void magnitude_histogram(const BlockInputs& in, std::size_t k, std::uint64_t* hist);
void magnitude_candidates(const BlockInputs& in, std::size_t k, std::size_t bucket, std::uint64_t offset,
                          std::vector<Magnitude>& out);
void random_mask_l1(const BlockInputs& in, const TaskCombineParams& p, std::uint64_t offset, double* l1);
void task_combine(const BlockInputs& in, const TaskCombineParams& p, std::uint64_t offset, DType out_dtype, void* out);

}  // namespace wavg::cpu
