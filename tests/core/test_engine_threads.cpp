// The engine and the CPU kernels give the same bytes for any thread count, through both ways a block reaches the
// kernel (a view into a mapped file, a copy made by read()), and the bytes match a plain scalar loop written here.

#include <doctest/doctest.h>
#include <omp.h>

#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "wavg/engine.hpp"

using namespace wavg;

namespace {

// An input held in memory; it lends views only when asked to, so both read paths run.
class MemoryReader final : public Reader {
 public:
  MemoryReader(std::string path, std::vector<TensorInfo> tensors, std::vector<std::vector<float>> values, bool views)
      : m_path(std::move(path)), m_tensors(std::move(tensors)), m_values(std::move(values)), m_views(views) {}
  const std::string& path() const override { return m_path; }
  std::string format_name() const override { return "memory"; }
  std::string layout() const override { return "test"; }
  const std::vector<TensorInfo>& tensors() const override { return m_tensors; }
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override {
    std::memcpy(dst, m_values[index].data() + offset, count * sizeof(float));
  }
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t) override {
    return m_views ? m_values[index].data() + offset : nullptr;
  }
  void release(std::size_t, std::uint64_t, std::uint64_t) override { ++released; }
  std::map<std::string, std::string> metadata() const override { return {}; }
  int released = 0;

 private:
  std::string m_path;
  std::vector<TensorInfo> m_tensors;
  std::vector<std::vector<float>> m_values;
  bool m_views;
};

class MemoryWriter final : public Writer {
 public:
  explicit MemoryWriter(const std::vector<TensorInfo>& tensors) {
    for (const auto& t : tensors) out.emplace_back(t.count());
  }
  bool holds_template_values(std::size_t) const override { return false; }
  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    std::memcpy(out[index].data() + offset, src, count * sizeof(float));
  }
  void finish() override {}
  std::vector<std::vector<float>> out;
};

std::vector<std::vector<float>> merge_with_threads(const std::vector<std::vector<std::vector<float>>>& inputs,
                                                   const std::vector<TensorInfo>& tensors,
                                                   const std::vector<double>& weights, int threads) {
  std::vector<std::unique_ptr<MemoryReader>> readers;
  std::vector<Reader*> raw;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    readers.push_back(std::make_unique<MemoryReader>("in" + std::to_string(k), tensors, inputs[k], k % 2 == 0));
    raw.push_back(readers.back().get());
  }
  const Plan plan = build_plan(raw, PlanOptions{});
  auto backend = make_cpu_backend();
  auto method = make_weighted_mean(*backend, weights);
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  // A block budget far below the tensor size: the biggest tensor goes through many blocks and a ragged last one.
  Engine engine(plan, raw, *method, *backend, 3 * 100'003 * sizeof(float));
  MemoryWriter writer(tensors);
  engine.verify();
  engine.run(writer);
  omp_set_num_threads(before);
  CHECK(readers[0]->released > 0);  // every lent view is given back
  return writer.out;
}

}  // namespace

TEST_CASE("merge results are bit-identical for 1 and 4 threads and match a scalar loop") {
  const std::vector<TensorInfo> tensors{{"big", DType::f32, {1000, 1049}}, {"small", DType::f32, {7}}};
  std::mt19937_64 rng(42);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<std::vector<std::vector<float>>> inputs(3);
  for (auto& input : inputs)
    for (const auto& t : tensors) {
      input.emplace_back(t.count());
      for (float& v : input.back()) v = normal(rng);
    }

  for (const std::vector<double>& weights : {std::vector<double>{}, std::vector<double>{0.5, 1.25, 3.0}}) {
    const auto one = merge_with_threads(inputs, tensors, weights, 1);
    const auto four = merge_with_threads(inputs, tensors, weights, 4);
    double sum = 0;
    std::vector<double> w = weights.empty() ? std::vector<double>(3, 1.0) : weights;
    for (double x : w) sum += x;
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      CHECK(std::memcmp(one[t].data(), four[t].data(), one[t].size() * sizeof(float)) == 0);
      std::size_t mismatches = 0;
      for (std::size_t i = 0; i < one[t].size(); ++i) {
        double acc = 0;
        for (std::size_t k = 0; k < 3; ++k) acc += w[k] * static_cast<double>(inputs[k][t][i]);
        const auto expected = static_cast<float>(acc / sum);
        mismatches += std::memcmp(&expected, &one[t][i], sizeof(float)) != 0;
      }
      CHECK(mismatches == 0);
    }
  }
}
