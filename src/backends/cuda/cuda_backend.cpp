// The CUDA backend. The Backend interface hands over host memory (often a view into a memory-mapped input), so
// every call streams its elements through the GPU in chunks:
//
//   host memory --memcpy--> pinned slot --H2D--> device slot --kernel--> device slot --D2H--> pinned --> host
//
// Each of k_slots slots owns a CUDA stream, a pinned host buffer and a device buffer. Chunk c goes to slot
// c % k_slots; before a slot is refilled its previous chunk is waited for and its results copied out, so while the
// CPU stages chunk c+1 and the copy engines move it, the GPU computes chunk c. Device and pinned memory stay
// within k_slots * k_slot_bytes however large the model, the tensor or the block is (a chunk always holds at least
// one reduction chunk of elements, so with very many inputs a slot grows past k_slot_bytes).
//
// Chunks start at multiples of k_reduce_chunk elements, so the reductions' partial sums cover the same elements as
// the CPU's and are added on the host in the same order: the norms and distances are the CPU's bits too.
// all_equal stays on the host: it is a memcmp of host memory, which a round trip through the GPU cannot beat.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backends/cpu/cpu_federated.hpp"
#include "backends/cpu/cpu_task.hpp"
#include "backends/cuda/cuda_kernels.hpp"
#include "wavg/backend.hpp"
#include "wavg/error.hpp"

namespace wavg {

namespace {

using cuda::Chunk;
using cuda::k_reduce_chunk;

constexpr int k_slots = 2;
constexpr std::uint64_t k_slot_bytes = 128ull << 20;

// The slot count and size, overridable for tests/bench/gpu_bench.cpp's sweep (WAVG_CUDA_SLOTS, WAVG_CUDA_SLOT_MIB;
// out-of-range values are ignored).
std::uint64_t env_number(const char* name, std::uint64_t fallback, std::uint64_t low, std::uint64_t high) {
  const char* text = std::getenv(name);
  if (!text) return fallback;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  return end != text && *end == 0 && v >= low && v <= high ? v : fallback;
}
constexpr std::uint64_t k_align = 256;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail("", std::string("cuda: ") + what + ": " + cudaGetErrorString(e));
}

std::uint64_t round_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

// Copies between host memory and a pinned buffer with every OpenMP thread. One thread's memcpy (about 10 GB/s,
// taking a mapped input's page faults one at a time) held the whole GPU path to a sixth of the pinned copy rate
// on an H200 (tests/bench/gpu_run.sh, README's GPU section).
void parallel_copy(void* dst, const void* src, std::uint64_t len) {
  constexpr std::uint64_t piece = 1 << 20;
  const auto pieces = static_cast<std::int64_t>((len + piece - 1) / piece);
#pragma omp parallel for schedule(static) if (pieces > 1)
  for (std::int64_t p = 0; p < pieces; ++p) {
    const std::uint64_t at = static_cast<std::uint64_t>(p) * piece;
    std::memcpy(static_cast<char*>(dst) + at, static_cast<const char*>(src) + at, std::min(piece, len - at));
  }
}

// One array a call streams: `count` elements of `elem` bytes from host `src` (inputs), or results of `unit_bytes`
// per `unit` elements to host `dst` (outputs). An array may be both (the moments, updated in place).
struct Array {
  const void* src = nullptr;
  void* dst = nullptr;
  std::size_t elem = 0;
  std::uint64_t unit = 1;
};

// Where one array of the current chunk lies in the slot's buffers.
class Slot {
 public:
  Slot() { check(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking), "creating a stream"); }
  ~Slot() {
    cudaStreamDestroy(m_stream);
    cudaFree(m_device);
    cudaFreeHost(m_pinned);
  }
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;

  void reserve(std::uint64_t bytes) {
    if (bytes <= m_capacity) return;
    cudaFree(m_device);
    cudaFreeHost(m_pinned);
    m_device = nullptr;
    m_pinned = nullptr;
    m_capacity = 0;
    check(cudaMalloc(&m_device, bytes), "allocating device memory");
    check(cudaMallocHost(&m_pinned, bytes), "allocating pinned host memory");
    m_capacity = bytes;
  }

  // Waits for the slot's chunk and copies its results to their host arrays.
  void finish() {
    check(cudaStreamSynchronize(m_stream), "running a kernel");
    for (const Pending& p : m_pending) parallel_copy(p.dst, static_cast<char*>(m_pinned) + p.offset, p.bytes);
    m_pending.clear();
  }

  cudaStream_t stream() const { return m_stream; }
  char* device() const { return static_cast<char*>(m_device); }
  char* pinned() const { return static_cast<char*>(m_pinned); }
  void expect(void* dst, std::uint64_t offset, std::uint64_t bytes) { m_pending.push_back({dst, offset, bytes}); }

 private:
  struct Pending {
    void* dst;
    std::uint64_t offset, bytes;
  };
  cudaStream_t m_stream = nullptr;
  void* m_device = nullptr;
  void* m_pinned = nullptr;
  std::uint64_t m_capacity = 0;
  std::vector<Pending> m_pending;
};

// Runs the kernel of one chunk: device pointers of the arrays (in call order), first element, element count and
// the stride (elements) that separates arrays of the same element size.
using Launch = std::function<void(cudaStream_t, const std::vector<char*>&, std::uint64_t, std::uint64_t)>;

class CudaBackend final : public Backend {
 public:
  CudaBackend() {
    check(cudaSetDevice(0), "selecting device 0");
    m_slots.resize(env_number("WAVG_CUDA_SLOTS", k_slots, 1, 8));
    for (auto& s : m_slots) s = std::make_unique<Slot>();
    check(cudaMalloc(&m_params, k_params_bytes), "allocating device memory");
  }
  ~CudaBackend() override {
    cudaDeviceSynchronize();
    cudaFree(m_params);
    cudaFree(m_hist);
  }

  const char* name() const override { return "cuda"; }

  void weighted_sum(const BlockInputs& in, std::span<const double> weights, double divisor, DType out_dtype,
                    void* out) override {
    WAVG_ASSERT(weights.size() == in.data.size());
    const double* w = params(weights.data(), weights.size());
    std::vector<Array> arrays = input_arrays(in);
    arrays.push_back({nullptr, out, dtype_size(out_dtype), 1});
    stream(in.count, arrays, [&](cudaStream_t s, const std::vector<char*>& d, std::uint64_t, std::uint64_t count) {
      cuda::launch_weighted_sum(s, chunk(in, d, count), w, divisor, out_dtype, d.back());
    });
  }

  bool all_equal(const BlockInputs& in) override { return m_cpu->all_equal(in); }

  void update_sum_squares(const BlockInputs& in, double* sums) override {
    const std::size_t n = in.data.size();
    std::vector<double> partial(reduce_chunks(in.count) * n, 0.0);
    std::vector<Array> arrays = input_arrays(in);
    arrays.push_back({nullptr, partial.data(), n * sizeof(double), k_reduce_chunk});
    stream(in.count, arrays, [&](cudaStream_t s, const std::vector<char*>& d, std::uint64_t, std::uint64_t count) {
      cuda::launch_sum_squares(s, chunk(in, d, count), reinterpret_cast<double*>(d.back()));
    });
    for (std::uint64_t r = 0; r < reduce_chunks(in.count); ++r)
      for (std::size_t k = 0; k < n; ++k) sums[k] += partial[r * n + k];
  }

  void update_sq_distances(const BlockInputs& in, const double* scales, double* dist) override {
    const std::size_t n = in.data.size();
    const double* sc = params(scales, n);
    std::vector<double> partial(reduce_chunks(in.count) * n * n, 0.0);
    std::vector<Array> arrays = input_arrays(in);
    arrays.push_back({nullptr, partial.data(), n * n * sizeof(double), k_reduce_chunk});
    stream(in.count, arrays, [&](cudaStream_t s, const std::vector<char*>& d, std::uint64_t, std::uint64_t count) {
      cuda::launch_sq_distances(s, chunk(in, d, count), sc, reinterpret_cast<double*>(d.back()));
    });
    for (std::uint64_t r = 0; r < reduce_chunks(in.count); ++r)
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t l = j + 1; l < n; ++l) dist[j * n + l] += partial[(r * n + j) * n + l];
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t l = 0; l < j; ++l) dist[j * n + l] = dist[l * n + j];
  }

  void update_combine(const BlockInputs& in, const double* coeffs, double divisor, double* out) override {
    const double* c = params(coeffs, in.data.size());
    std::vector<Array> arrays = input_arrays(in);
    arrays.push_back({nullptr, out, sizeof(double), 1});
    stream(in.count, arrays, [&](cudaStream_t s, const std::vector<char*>& d, std::uint64_t, std::uint64_t count) {
      cuda::launch_combine(s, chunk(in, d, count), c, divisor, reinterpret_cast<double*>(d.back()));
    });
  }

  void update_order_statistic(const BlockInputs& in, const double* scales, const double* weights, OrderStat stat,
                              std::uint32_t trim, double* out) override {
    const std::size_t n = in.data.size();
    if (n > cuda::k_max_sort_inputs) return cpu::update_order_statistic(in, scales, weights, stat, trim, out);
    std::vector<double> both(scales, scales + n);
    both.insert(both.end(), weights, weights + n);
    const double* p = params(both.data(), both.size());
    std::vector<Array> arrays = input_arrays(in);
    arrays.push_back({nullptr, out, sizeof(double), 1});
    stream(in.count, arrays, [&](cudaStream_t s, const std::vector<char*>& d, std::uint64_t, std::uint64_t count) {
      cuda::launch_order_statistic(s, chunk(in, d, count), p, p + n, stat, trim, reinterpret_cast<double*>(d.back()));
    });
  }

  void add_gaussian_noise(double* values, std::uint64_t count, double sigma, std::uint64_t seed, std::uint64_t tensor,
                          std::uint64_t offset) override {
    const std::vector<Array> arrays{{values, values, sizeof(double), 1}};
    stream(count, arrays, [&](cudaStream_t s, const std::vector<char*>& d, std::uint64_t first, std::uint64_t n) {
      cuda::launch_gaussian_noise(s, reinterpret_cast<double*>(d[0]), n, sigma, seed, tensor, offset + first);
    });
  }

  void server_step(const ServerStepParams& p, std::uint64_t count, const double* delta, const void* base, DType dtype,
                   double* m, double* v, DType out_dtype, void* out) override {
    // Arrays in a fixed order; the absent ones are left out and their device pointers passed as null.
    std::vector<Array> arrays{{delta, nullptr, sizeof(double), 1}};
    const int ib = base ? push(arrays, {base, nullptr, dtype_size(dtype), 1}) : -1;
    const int im = m ? push(arrays, {m, m, sizeof(double), 1}) : -1;
    const int iv = v ? push(arrays, {v, v, sizeof(double), 1}) : -1;
    arrays.push_back({nullptr, out, dtype_size(out_dtype), 1});
    stream(count, arrays, [&](cudaStream_t s, const std::vector<char*>& d, std::uint64_t, std::uint64_t n) {
      auto at = [&](int i) { return i < 0 ? nullptr : d[static_cast<std::size_t>(i)]; };
      cuda::launch_server_step(s, p, n, reinterpret_cast<double*>(d[0]), at(ib), dtype,
                               reinterpret_cast<double*>(at(im)), reinterpret_cast<double*>(at(iv)), out_dtype,
                               d.back());
    });
  }

  void update_gram(const BlockInputs& in, double* gram) override {
    const std::size_t n = in.data.size();
    std::vector<double> partial(reduce_chunks(in.count) * n * n, 0.0);
    std::vector<Array> arrays = input_arrays(in);
    arrays.push_back({nullptr, partial.data(), n * n * sizeof(double), k_reduce_chunk});
    stream(in.count, arrays, [&](cudaStream_t s, const std::vector<char*>& d, std::uint64_t, std::uint64_t count) {
      cuda::launch_gram(s, chunk(in, d, count), reinterpret_cast<double*>(d.back()));
    });
    for (std::uint64_t r = 0; r < reduce_chunks(in.count); ++r)
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t l = j; l < n; ++l) gram[j * n + l] += partial[(r * n + j) * n + l];
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t l = 0; l < j; ++l) gram[j * n + l] = gram[l * n + j];
  }

  void magnitude_histogram(const BlockInputs& in, std::size_t k, std::uint64_t* hist) override {
    constexpr std::size_t bytes = k_magnitude_buckets * sizeof(unsigned long long);
    if (!m_hist) check(cudaMalloc(reinterpret_cast<void**>(&m_hist), bytes), "allocating device memory");
    check(cudaMemset(m_hist, 0, bytes), "clearing a histogram");
    check(cudaDeviceSynchronize(), "clearing a histogram");  // the slots' streams do not wait for the legacy one
    const void* const one[] = {in.data[k]};
    const BlockInputs only{in.dtype, in.count, one, in.base};
    stream(in.count, input_arrays(only),
           [&](cudaStream_t s, const std::vector<char*>& d, std::uint64_t, std::uint64_t count) {
             cuda::launch_magnitude_histogram(s, chunk(only, d, count), m_hist);
           });
    std::vector<unsigned long long> counts(k_magnitude_buckets);
    check(cudaMemcpy(counts.data(), m_hist, bytes, cudaMemcpyDeviceToHost), "copying a histogram");
    for (std::size_t b = 0; b < k_magnitude_buckets; ++b) hist[b] += counts[b];
  }

  // The few elements of one bucket are gathered on the host: a pass over host memory, with nothing to compute.
  void magnitude_candidates(const BlockInputs& in, std::size_t k, std::size_t bucket, std::uint64_t offset,
                            std::vector<Magnitude>& out) override {
    cpu::magnitude_candidates(in, k, bucket, offset, out);
  }

  void random_mask_l1(const BlockInputs& in, const TaskCombineParams& p, std::uint64_t offset, double* l1) override {
    const std::size_t n = in.data.size();
    const TaskCombineParams dp = device_params(p, n);
    std::vector<double> partial(reduce_chunks(in.count) * n * 2, 0.0);
    std::vector<Array> arrays = input_arrays(in);
    arrays.push_back({nullptr, partial.data(), n * 2 * sizeof(double), k_reduce_chunk});
    stream(
        in.count, arrays, [&](cudaStream_t s, const std::vector<char*>& d, std::uint64_t first, std::uint64_t count) {
          cuda::launch_random_mask_l1(s, chunk(in, d, count), dp, offset + first, reinterpret_cast<double*>(d.back()));
        });
    for (std::uint64_t r = 0; r < reduce_chunks(in.count); ++r)
      for (std::size_t j = 0; j < n * 2; ++j) l1[j] += partial[r * n * 2 + j];
  }

  void task_combine(const BlockInputs& in, const TaskCombineParams& p, std::uint64_t offset, DType out_dtype,
                    void* out) override {
    const TaskCombineParams dp = device_params(p, in.data.size());
    std::vector<Array> arrays = input_arrays(in);
    arrays.push_back({nullptr, out, dtype_size(out_dtype), 1});
    stream(in.count, arrays,
           [&](cudaStream_t s, const std::vector<char*>& d, std::uint64_t first, std::uint64_t count) {
             cuda::launch_task_combine(s, chunk(in, d, count), dp, offset + first, out_dtype, d.back());
           });
  }

 private:
  static constexpr std::size_t k_params_bytes = 64 << 10;

  // `p` with its per-input arrays (weights, cuts, densities, scales) copied to the device.
  TaskCombineParams device_params(const TaskCombineParams& p, std::size_t n) {
    std::vector<double> pack;
    auto put = [&](const auto* a) -> std::ptrdiff_t {
      if (!a) return -1;
      const auto at = static_cast<std::ptrdiff_t>(pack.size());
      for (std::size_t k = 0; k < n; ++k) pack.push_back(std::bit_cast<double>(a[k]));
      return at;
    };
    const std::ptrdiff_t w = put(p.weights), t = put(p.threshold), tl = put(p.tie_last), dt = put(p.drop_threshold),
                         dl = put(p.drop_tie_last), de = put(p.densities), sc = put(p.scale);
    const double* dev = params(pack.data(), pack.size());
    auto at = [&](std::ptrdiff_t i) { return i < 0 ? nullptr : dev + i; };
    auto at_index = [&](std::ptrdiff_t i) { return reinterpret_cast<const std::uint64_t*>(at(i)); };
    TaskCombineParams d = p;
    d.weights = at(w);
    d.threshold = at(t);
    d.tie_last = at_index(tl);
    d.drop_threshold = at(dt);
    d.drop_tie_last = at_index(dl);
    d.densities = at(de);
    d.scale = at(sc);
    return d;
  }

  static int push(std::vector<Array>& arrays, Array a) {
    arrays.push_back(a);
    return static_cast<int>(arrays.size() - 1);
  }

  // The inputs, then the base when there is one: the layout cuda::Inputs expects.
  static std::vector<Array> input_arrays(const BlockInputs& in) {
    std::vector<Array> arrays;
    for (const void* p : in.data) arrays.push_back({p, nullptr, dtype_size(in.dtype), 1});
    if (in.base) arrays.push_back({in.base, nullptr, dtype_size(in.dtype), 1});
    return arrays;
  }

  // The kernel's view of the inputs laid out by input_arrays in the slot `d`.
  Chunk chunk(const BlockInputs& in, const std::vector<char*>& d, std::uint64_t count) const {
    const auto n = static_cast<std::uint32_t>(in.data.size());
    return {in.dtype, count, {d[0], m_stride, n, in.base ? d[n] : nullptr}};
  }

  // Copies small per-call parameters (weights, scales) to the device; every earlier chunk has finished by now.
  const double* params(const double* values, std::size_t n) {
    if (n * sizeof(double) > k_params_bytes) fail("", "cuda: too many inputs for the CUDA backend; use --device cpu");
    check(cudaMemcpy(m_params, values, n * sizeof(double), cudaMemcpyHostToDevice), "copying parameters");
    // A copy from pageable memory may return before its DMA ends, and the slots' streams do not wait for the
    // legacy stream: wait here, once per call.
    check(cudaDeviceSynchronize(), "copying parameters");
    return static_cast<const double*>(m_params);
  }

  // Streams `count` elements of `arrays` through the slots, running `launch` on each chunk.
  void stream(std::uint64_t count, const std::vector<Array>& arrays, const Launch& launch) {
    if (count == 0) return;
    std::uint64_t per_element = 0;
    for (const Array& a : arrays) per_element += a.src ? a.elem : 0;
    for (const Array& a : arrays) per_element += a.dst && !a.src ? (a.elem + a.unit - 1) / a.unit : 0;
    std::uint64_t chunk = m_slot_bytes / std::max<std::uint64_t>(per_element, 1) / k_reduce_chunk * k_reduce_chunk;
    chunk = std::min(std::max(chunk, k_reduce_chunk), round_up(count, k_reduce_chunk));
    // A multiple of k_align elements, so every input of the slot starts k * m_stride elements in, aligned.
    m_stride = round_up(chunk, k_align);
    // Offsets of each array in a slot: inputs take stride elements, outputs whole units.
    std::vector<std::uint64_t> offset(arrays.size());
    std::uint64_t bytes = 0;
    for (std::size_t a = 0; a < arrays.size(); ++a) {
      offset[a] = bytes;
      const Array& x = arrays[a];
      bytes += round_up(x.src ? m_stride * x.elem : (chunk + x.unit - 1) / x.unit * x.elem, k_align);
    }
    for (auto& s : m_slots) s->reserve(bytes);

    std::vector<char*> dev(arrays.size());
    const std::uint64_t chunks = (count + chunk - 1) / chunk;
    for (std::uint64_t c = 0; c < chunks; ++c) {
      Slot& slot = *m_slots[c % m_slots.size()];
      slot.finish();
      const std::uint64_t first = c * chunk, n = std::min(chunk, count - first);
      for (std::size_t a = 0; a < arrays.size(); ++a) {
        const Array& x = arrays[a];
        dev[a] = slot.device() + offset[a];
        if (!x.src) continue;
        const std::uint64_t len = n * x.elem;
        parallel_copy(slot.pinned() + offset[a], static_cast<const char*>(x.src) + first * x.elem, len);
        check(cudaMemcpyAsync(dev[a], slot.pinned() + offset[a], len, cudaMemcpyHostToDevice, slot.stream()),
              "copying to the device");
      }
      launch(slot.stream(), dev, first, n);
      check(cudaGetLastError(), "launching a kernel");
      for (std::size_t a = 0; a < arrays.size(); ++a) {
        const Array& x = arrays[a];
        if (!x.dst) continue;
        const std::uint64_t len = (n + x.unit - 1) / x.unit * x.elem;
        check(cudaMemcpyAsync(slot.pinned() + offset[a], dev[a], len, cudaMemcpyDeviceToHost, slot.stream()),
              "copying from the device");
        slot.expect(static_cast<char*>(x.dst) + first / x.unit * x.elem, offset[a], len);
      }
    }
    for (auto& s : m_slots) s->finish();
  }

  std::unique_ptr<Backend> m_cpu = make_cpu_backend();
  std::vector<std::unique_ptr<Slot>> m_slots;
  std::uint64_t m_slot_bytes = env_number("WAVG_CUDA_SLOT_MIB", k_slot_bytes >> 20, 1, 4096) << 20;
  void* m_params = nullptr;
  unsigned long long* m_hist = nullptr;  // magnitude_histogram's counts, allocated on first use
  std::uint64_t m_stride = 0;
};

}  // namespace

CudaProbe probe_cuda() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  // A machine without a GPU (or its driver) answers with an error code: that is "no CUDA device" to the user, with
  // the runtime's words kept as the cause rather than shown as if something were broken.
  if (e != cudaSuccess) return {false, "no CUDA device", std::string("CUDA runtime: ") + cudaGetErrorString(e)};
  if (count == 0) return {false, "no CUDA device", ""};
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return {false, "CUDA device 0 cannot be queried", ""};
  return {true, std::string(prop.name) + ", " + std::to_string(prop.totalGlobalMem >> 20) + " MiB", ""};
}

std::unique_ptr<Backend> make_cuda_backend() {
  const CudaProbe probe = probe_cuda();
  if (!probe.usable) fail("", "--device cuda: " + probe.detail + (probe.cause.empty() ? "" : " (" + probe.cause + ")"));
  return std::make_unique<CudaBackend>();
}

}  // namespace wavg
