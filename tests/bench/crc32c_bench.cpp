// CRC-32C throughput on one core: wavg's crc32c::extend (three streams of SSE 4.2 crc32 when the processor has
// it) against one stream of the same instruction (what it ran before issue 30) and the slicing tables, with zlib's
// CRC-32 beside them (what a .pt zip costs per byte). Thread CPU time, fastest of 7, over 256 KiB 256 times (in
// the cache: the instruction's own bound) and 64 MiB once (memory's): a benchmark, not a test
// (tests/bench/codec_floor.py runs it).
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <utility>
#include <vector>

#include "tensorflow/crc32c.hpp"

#if defined(__x86_64__)
#include <nmmintrin.h>

namespace {
__attribute__((target("sse4.2"))) std::uint32_t one_stream(std::uint32_t crc, const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t c = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
  }
  auto c32 = static_cast<std::uint32_t>(c);
  for (; n > 0; --n, ++p) c32 = _mm_crc32_u8(c32, *p);
  return ~c32;
}
}  // namespace
#endif

namespace {
double cpu_now() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

template <class F>
void time_it(const char* name, const std::vector<unsigned char>& buf, std::size_t size, int reps, F f) {
  double best = 1e30;
  std::uint32_t crc = 0;
  for (int r = 0; r < 7; ++r) {
    const double t0 = cpu_now();
    for (int k = 0; k < reps; ++k) {
      asm volatile("" : : "r"(buf.data()) : "memory");  // each repetition reads the buffer again
      crc = f(buf.data(), size);
    }
    const double t = cpu_now() - t0;
    if (t < best) best = t;
  }
  const double bytes = static_cast<double>(size) * reps;
  std::printf("%-28s %8.4f CPU s for %6.1f MiB read (%7zu B x %3d): %6.2f GB/s  (crc %08x)\n", name, best,
              bytes / 1048576, size, reps, bytes / best / 1e9, crc);
}
}  // namespace

int main() {
  std::vector<unsigned char> buf(std::size_t{64} << 20);
  std::uint32_t x = 1;
  for (auto& b : buf) b = static_cast<unsigned char>((x = x * 1103515245u + 12345u) >> 24);
  for (const auto& [size, reps] : {std::pair<std::size_t, int>{256 << 10, 256}, {buf.size(), 1}}) {
    time_it("crc32c::extend", buf, size, reps,
            [](const void* p, std::size_t n) { return wavg::crc32c::extend(0, p, n); });
#if defined(__x86_64__)
    if (__builtin_cpu_supports("sse4.2"))
      time_it("crc32c one stream (before)", buf, size, reps,
              [](const void* p, std::size_t n) { return one_stream(0, p, n); });
#endif
    time_it("crc32c tables", buf, size, reps,
            [](const void* p, std::size_t n) { return wavg::crc32c::extend_tables(0, p, n); });
    time_it("zlib crc32", buf, size, reps, [](const void* p, std::size_t n) {
      return static_cast<std::uint32_t>(crc32_z(0, static_cast<const Bytef*>(p), n));
    });
  }
}
