// GPU figures for the README's GPU section (run by tests/bench/gpu_run.sh on a lent GPU; a benchmark, not a test):
// the device-to-device copy rate (the kernels' ceiling), the mean kernel's throughput for N = 2, 4, 8, 16 float32
// and bfloat16 inputs against it, the TIES and median kernels', pinned and pageable host-to-device copies, and the
// whole CUDA backend (host memory in, host memory out, through its staging slots) against the CPU backend for
// several slot sizes and counts (WAVG_CUDA_SLOT_MIB, WAVG_CUDA_SLOTS). One JSON object a line on stdout.

#include <cuda_runtime_api.h>
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cuda/cuda_kernels.hpp"
#include "wavg/backend.hpp"

using namespace wavg;

namespace {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "gpu_bench: %s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

// Milliseconds per run of f on the default stream: one warm-up, then the mean of `reps`.
template <class F>
double time_ms(int reps, F&& f) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  f();
  check(cudaDeviceSynchronize(), "warm-up");
  check(cudaEventRecord(a), "event");
  for (int r = 0; r < reps; ++r) f();
  check(cudaEventRecord(b), "event");
  check(cudaEventSynchronize(b), "run");
  check(cudaGetLastError(), "launch");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, a, b), "event");
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return static_cast<double>(ms) / reps;
}

double gbps(double bytes, double ms) { return bytes / ms / 1e6; }

void* device_alloc(std::size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc");
  check(cudaMemset(p, 0x3c, bytes), "cudaMemset");  // finite values in every dtype
  return p;
}

}  // namespace

int main() {
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "device 0");
  std::printf(
      "{\"what\": \"device\", \"name\": \"%s\", \"sms\": %d, \"memory_mib\": %zu, \"driver\": %d, "
      "\"runtime\": %d}\n",
      prop.name, prop.multiProcessorCount, prop.totalGlobalMem >> 20, driver, runtime);

  // Device-to-device copy: bytes read plus bytes written.
  const std::size_t copy_bytes = 2ull << 30;
  void* src = device_alloc(copy_bytes);
  void* dst = device_alloc(copy_bytes);
  const double copy_ms =
      time_ms(10, [&] { check(cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice), "copy"); });
  const double copy_rate = gbps(2.0 * copy_bytes, copy_ms);
  std::printf("{\"what\": \"d2d_copy\", \"gb_per_s\": %.1f}\n", copy_rate);
  check(cudaFree(dst), "free");

  // The mean kernel (weighted_sum with weights 1, divisor N) reading N inputs and writing one output in place of
  // the copy's buffers: 4 GiB of inputs per run.
  const std::size_t in_bytes = 4ull << 30;
  void* inputs = device_alloc(in_bytes);
  void* out = device_alloc(in_bytes / 2);
  double* weights = static_cast<double*>(device_alloc(64 * sizeof(double)));
  std::vector<double> ones(64, 1.0);
  check(cudaMemcpy(weights, ones.data(), ones.size() * sizeof(double), cudaMemcpyHostToDevice), "weights");
  for (DType t : {DType::f32, DType::bf16})
    for (std::uint32_t n : {2u, 4u, 8u, 16u}) {
      const std::uint64_t count = in_bytes / dtype_size(t) / n;
      const cuda::Chunk c{t, count, {inputs, count, n, nullptr}};
      const double ms = time_ms(5, [&] { cuda::launch_weighted_sum(nullptr, c, weights, n, t, out); });
      const double rate = gbps(static_cast<double>((n + 1) * count * dtype_size(t)), ms);
      std::printf(
          "{\"what\": \"mean_kernel\", \"dtype\": \"%s\", \"n\": %u, \"gb_per_s\": %.1f, "
          "\"of_copy\": %.3f}\n",
          std::string(dtype_name(t)).c_str(), n, rate, rate / copy_rate);
    }

  // TIES (magnitude cut, sign election, normalized) and the weighted median, N = 4 float32.
  {
    const std::uint32_t n = 4;
    const std::uint64_t count = in_bytes / 4 / (n + 1);
    const cuda::Chunk c{DType::f32, count, {inputs, count, n, static_cast<char*>(inputs) + n * count * 4}};
    std::vector<double> host(3 * n, 0.0);
    for (std::uint32_t k = 0; k < n; ++k) host[k] = 1.0;            // weights
    for (std::uint32_t k = 0; k < n; ++k) host[n + k] = 1e-3;       // thresholds
    for (std::uint32_t k = 0; k < n; ++k) host[2 * n + k] = 1e300;  // tie_last, as the bits of a huge double
    check(cudaMemcpy(weights, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice), "params");
    TaskCombineParams p;
    p.weights = weights;
    p.sparsify = Sparsify::magnitude;
    p.threshold = weights + n;
    p.tie_last = reinterpret_cast<const std::uint64_t*>(weights + 2 * n);
    p.consensus = Consensus::sign;
    p.normalize = Normalize::yes;
    const double ms = time_ms(5, [&] { cuda::launch_task_combine(nullptr, c, p, 0, DType::f32, out); });
    const double rate = gbps(static_cast<double>((n + 2) * count * 4), ms);
    std::printf("{\"what\": \"ties_kernel\", \"n\": %u, \"gb_per_s\": %.1f, \"of_copy\": %.3f}\n", n, rate,
                rate / copy_rate);
    const double ms2 = time_ms(5, [&] {
      cuda::launch_order_statistic(nullptr, c, weights, weights, OrderStat::median, 0, static_cast<double*>(out));
    });
    const double rate2 = gbps(static_cast<double>(n * count * 4 + count * 8), ms2);
    std::printf("{\"what\": \"median_kernel\", \"n\": %u, \"gb_per_s\": %.1f, \"of_copy\": %.3f}\n", n, rate2,
                rate2 / copy_rate);
  }
  check(cudaFree(inputs), "free");
  check(cudaFree(out), "free");

  // Host to device: pinned and pageable, 1 GiB.
  const std::size_t h_bytes = 1ull << 30;
  void* pinned = nullptr;
  check(cudaMallocHost(&pinned, h_bytes), "cudaMallocHost");
  std::vector<char> pageable(h_bytes, 1);
  const double pin_ms =
      time_ms(5, [&] { check(cudaMemcpyAsync(src, pinned, h_bytes, cudaMemcpyHostToDevice), "h2d pinned"); });
  const double page_ms =
      time_ms(3, [&] { check(cudaMemcpy(src, pageable.data(), h_bytes, cudaMemcpyHostToDevice), "h2d pageable"); });
  std::printf("{\"what\": \"h2d\", \"pinned_gb_per_s\": %.1f, \"pageable_gb_per_s\": %.1f}\n", gbps(h_bytes, pin_ms),
              gbps(h_bytes, page_ms));
  check(cudaFreeHost(pinned), "free");
  check(cudaFree(src), "free");

  // The whole backend on host memory: the mean of 4 float32 inputs of 64 Mi elements (1 GiB in, 256 MiB out).
  const std::uint64_t count = 64ull << 20;
  std::vector<std::vector<float>> host_in(4, std::vector<float>(count, 0.5f));
  std::vector<const void*> ptrs;
  for (auto& v : host_in) ptrs.push_back(v.data());
  std::vector<float> host_out(count);
  const BlockInputs block{DType::f32, count, ptrs, nullptr};
  const std::vector<double> w(4, 1.0);
  auto wall = [&](Backend& b) {
    b.weighted_sum(block, w, 4, DType::f32, host_out.data());  // warm-up: pages, pinned buffers
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < 3; ++r) b.weighted_sum(block, w, 4, DType::f32, host_out.data());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 3;
  };
  for (int threads : {1, 4, 16}) {
    omp_set_num_threads(threads);
    auto cpu = make_cpu_backend();
    std::printf("{\"what\": \"backend_mean\", \"device\": \"cpu\", \"threads\": %d, \"s\": %.4f}\n", threads,
                wall(*cpu));
  }
  for (const char* slots : {"2", "3"})
    for (const char* mib : {"8", "32", "128"}) {
      setenv("WAVG_CUDA_SLOTS", slots, 1);
      setenv("WAVG_CUDA_SLOT_MIB", mib, 1);
      auto gpu = make_cuda_backend();
      std::printf("{\"what\": \"backend_mean\", \"device\": \"cuda\", \"slots\": %s, \"slot_mib\": %s, \"s\": %.4f}\n",
                  slots, mib, wall(*gpu));
    }
  return 0;
}
