#pragma once
// The CPU implementations of the federated kernels declared in wavg/backend.hpp (same contracts).

#include "wavg/backend.hpp"

namespace wavg::cpu {

void update_sum_squares(const BlockInputs& in, double* sums);
void update_sq_distances(const BlockInputs& in, const double* scales, double* dist);
void update_combine(const BlockInputs& in, const double* coeffs, double divisor, double* out);
void update_order_statistic(const BlockInputs& in, const double* scales, const double* weights, OrderStat stat,
                            std::uint32_t trim, double* out);
void add_gaussian_noise(double* values, std::uint64_t count, double sigma, std::uint64_t seed, std::uint64_t stream,
                        std::uint64_t offset);
void server_step(const ServerStepParams& params, std::uint64_t count, const double* delta, const void* base,
                 DType dtype, double* m, double* v, DType out_dtype, void* out);

}  // namespace wavg::cpu
