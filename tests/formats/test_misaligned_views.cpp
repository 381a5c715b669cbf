// Readers lend their mappings at any byte address (Reader::view), and the engine hands such views to the kernels
// instead of copying them: torch.distributed.checkpoint writes each chunk after a torch.save archive of odd length,
// so most float32 chunks lie at offsets that are not multiples of 4 (samples/dcp/, written by torch 2.15).

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "wavg/backend.hpp"
#include "wavg/element_math.hpp"
#include "wavg/engine.hpp"
#include "wavg/format.hpp"
#include "wavg/method.hpp"
#include "wavg/plan.hpp"

using namespace wavg;

namespace {

const std::string k_samples = WAVG_SAMPLES_DIR;

// Keeps what the engine writes, as bytes per plan entry.
class BytesWriter final : public Writer {
 public:
  explicit BytesWriter(const Plan& plan) {
    for (const PlanEntry& e : plan.entries) {
      size.push_back(dtype_size(e.out_dtype));
      out.emplace_back(e.info.count() * size.back());
    }
  }
  bool holds_template_values(std::size_t) const override { return false; }
  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    std::memcpy(out[index].data() + offset * size[index], src, count * size[index]);
  }
  void finish() override {}
  std::vector<std::vector<unsigned char>> out;
  std::vector<std::size_t> size;
};

}  // namespace

TEST_CASE("a DCP chunk at an odd offset is lent as it lies, and read() gives the same bytes") {
  const auto reader = open_reader(k_samples + "/dcp/run/step-100");
  std::size_t misaligned = 0;
  for (std::size_t i = 0; i < reader->tensors().size(); ++i) {
    const TensorInfo& t = reader->tensors()[i];
    if (t.count() == 0) continue;
    const void* view = reader->view(i, 0, t.count());
    REQUIRE_MESSAGE(view, t.name);
    misaligned += reinterpret_cast<std::uintptr_t>(view) % dtype_size(t.dtype) != 0;
    std::vector<unsigned char> copy(t.bytes());
    reader->read(i, 0, t.count(), copy.data());
    CHECK_MESSAGE(std::memcmp(view, copy.data(), copy.size()) == 0, t.name);
    reader->release(i, 0, t.count());
  }
  CHECK(misaligned > 0);  // what the sample is for: torch puts most chunks at odd offsets
}

// Both written by one process: every tensor is one chunk, so every block can be lent (a column-wise split, as in
// step-300, is one piece per row and is still copied).
TEST_CASE("merging DCP checkpoints lends every input block, misaligned ones included, and averages them exactly") {
  const auto a = open_reader(k_samples + "/dcp/run/step-100"), b = open_reader(k_samples + "/dcp/run/step-200");
  const std::vector<Reader*> inputs{a.get(), b.get()};
  const Plan plan = build_plan(inputs, PlanOptions{});
  auto cpu = make_cpu_backend();
  auto mean = make_weighted_mean(*cpu, {});
  Engine engine(plan, inputs, *mean, *cpu);
  engine.verify();
  BytesWriter writer(plan);
  engine.run(writer);
  CHECK(engine.block_reads().lent > 0);
  CHECK(engine.block_reads().copied == 0);
  // The averaged float32 tensors against (a + b) / 2 of what read() gives, computed here.
  std::size_t checked = 0;
  for (std::size_t e = 0; e < plan.entries.size(); ++e) {
    const PlanEntry& entry = plan.entries[e];
    if (entry.action != Action::average || entry.info.dtype != DType::f32 || entry.out_dtype != DType::f32) continue;
    const std::uint64_t n = entry.info.count();
    std::vector<float> x(n), y(n), got(n);
    a->read(entry.source[0], 0, n, x.data());
    b->read(entry.source[1], 0, n, y.data());
    std::memcpy(got.data(), writer.out[e].data(), n * sizeof(float));
    for (std::uint64_t i = 0; i < n; ++i)
      CHECK(got[i] == static_cast<float>((static_cast<double>(x[i]) + static_cast<double>(y[i])) / 2));
    ++checked;
  }
  CHECK(checked > 0);
}
