// CPU kernels for the task-vector methods (TIES, DARE, task arithmetic, SLERP, model stock). Like the federated
// kernels: element-wise work is split statically over OpenMP threads and runs over inputs in order; the Gram
// matrix is summed in fixed chunks added in chunk order; histograms are integer counts, so any split gives the same
// result; candidates are sorted by the caller, so their order does not matter.

#include "backends/cpu/cpu_task.hpp"

#include <omp.h>

#include <cmath>

#include "backends/cpu/cpu_elements.hpp"
#include "wavg/philox.hpp"

namespace wavg::cpu {

namespace {

inline std::size_t bucket_of(double magnitude) { return static_cast<std::size_t>(double_bits(magnitude) >> 48); }

}  // namespace

void update_gram(const BlockInputs& in, double* gram) {
  const std::size_t n = in.data.size();
  const auto chunks = static_cast<std::int64_t>(reduce_chunks(in.count));
  std::vector<double> partial(static_cast<std::size_t>(chunks) * n * n, 0.0);
  dispatch_float(in.dtype, [&]<DType T>() {
    const void* const* data = in.data.data();
#pragma omp parallel if (in.count >= k_parallel_threshold)
    {
      std::vector<double> u(n);
#pragma omp for schedule(static)
      for (std::int64_t c = 0; c < chunks; ++c) {
        double* g = partial.data() + static_cast<std::size_t>(c) * n * n;
        const std::uint64_t begin = static_cast<std::uint64_t>(c) * k_reduce_chunk;
        const std::uint64_t end = std::min(in.count, begin + k_reduce_chunk);
        for (std::uint64_t i = begin; i < end; ++i) {
          for (std::size_t k = 0; k < n; ++k) u[k] = update_at<T>(data[k], in.base, i);
          for (std::size_t j = 0; j < n; ++j)
            for (std::size_t l = j; l < n; ++l) g[j * n + l] += u[j] * u[l];
        }
      }
    }
  });
  for (std::int64_t c = 0; c < chunks; ++c) {
    const double* g = partial.data() + static_cast<std::size_t>(c) * n * n;
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t l = j; l < n; ++l) gram[j * n + l] += g[j * n + l];
  }
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t l = 0; l < j; ++l) gram[j * n + l] = gram[l * n + j];
}

void magnitude_histogram(const BlockInputs& in, std::size_t k, std::uint64_t* hist) {
  dispatch_float(in.dtype, [&]<DType T>() {
    const void* x = in.data[k];
    const auto count = static_cast<std::int64_t>(in.count);
#pragma omp parallel if (in.count >= k_parallel_threshold)
    {
      std::vector<std::uint64_t> local(k_magnitude_buckets, 0);
#pragma omp for schedule(static)
      for (std::int64_t s = 0; s < count; ++s) {
        const double m = std::fabs(update_at<T>(x, in.base, static_cast<std::uint64_t>(s)));
        if (m > 0) ++local[bucket_of(m)];
      }
#pragma omp critical
      for (std::size_t b = 0; b < k_magnitude_buckets; ++b) hist[b] += local[b];
    }
  });
}

void magnitude_candidates(const BlockInputs& in, std::size_t k, std::size_t bucket, std::uint64_t offset,
                          std::vector<Magnitude>& out) {
  dispatch_float(in.dtype, [&]<DType T>() {
    const void* x = in.data[k];
    for (std::uint64_t i = 0; i < in.count; ++i) {
      const double m = std::fabs(update_at<T>(x, in.base, i));
      if (m > 0 && bucket_of(m) == bucket) out.push_back({m, offset + i});
    }
  });
}

void task_combine(const BlockInputs& in, const TaskCombineParams& p, std::uint64_t offset, DType out_dtype,
                  void* out) {
  const std::size_t n = in.data.size();
  const auto count = static_cast<std::int64_t>(in.count);
  dispatch_float(in.dtype, [&]<DType T>() {
    dispatch_float(out_dtype, [&]<DType O>() {
      const void* const* data = in.data.data();
#pragma omp parallel if (in.count >= k_parallel_threshold)
      {
        std::vector<double> wt(n);  // w_k * tau_k after sparsification, per thread
#pragma omp for schedule(static)
        for (std::int64_t s = 0; s < count; ++s) {
          const auto i = static_cast<std::uint64_t>(s);
          const std::uint64_t index = offset + i;
          double sum = 0;
          Philox4x32 block{};
          for (std::size_t k = 0; k < n; ++k) {
            double t = update_at<T>(data[k], in.base, i);
            if (p.sparsify == Sparsify::magnitude) {
              const double m = std::fabs(t);
              if (!(m > p.threshold[k] || (m == p.threshold[k] && index <= p.tie_last[k]))) t = 0;
            } else if (p.sparsify == Sparsify::random) {
              if (k % 4 == 0) block = philox_block(p.seed, p.stream + (std::uint64_t{k / 4} << 32), index);
              t = static_cast<double>(block.v[k % 4]) * 0x1p-32 < p.density ? t / p.density : 0;
            }
            wt[k] = p.weights[k] * t;
            sum += wt[k];
          }
          double divisor = 0;
          if (p.consensus == Consensus::sign) {
            // mergekit's majority sign: + when the sum is >= 0; entries of sign 0 never agree.
            const double elected = sum >= 0 ? 1.0 : -1.0;
            sum = 0;
            for (std::size_t k = 0; k < n; ++k)
              if (sign_of(wt[k]) == elected) {
                sum += wt[k];
                divisor += p.weights[k];
              }
            if (divisor == 0) divisor = 1;
          } else {
            for (std::size_t k = 0; k < n; ++k) divisor += p.weights[k];
            if (std::fabs(divisor) < 1e-8) divisor = 1;
          }
          if (p.normalize == Normalize::yes) sum /= divisor;
          const double base = in.base ? load<T>(in.base, i) : 0.0;
          store<O>(out, i, base + p.lambda * sum);
        }
      }
    });
  });
}

}  // namespace wavg::cpu
