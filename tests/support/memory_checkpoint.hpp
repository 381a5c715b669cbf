#pragma once
// An in-memory Reader and Writer of float64 tensors, so method tests can run the real engine on hand-made values.

#include <map>
#include <string>
#include <vector>

#include "wavg/backend.hpp"
#include "wavg/engine.hpp"
#include "wavg/federated.hpp"
#include "wavg/format.hpp"

namespace wavg::test {

using Values = std::vector<std::vector<double>>;  // one vector per tensor

class MemoryReader final : public Reader {
 public:
  MemoryReader(std::string path, const Values& values, std::map<std::string, std::string> meta = {})
      : m_path(std::move(path)), m_values(values), m_meta(std::move(meta)) {
    for (std::size_t t = 0; t < values.size(); ++t) {
      std::string name = "t";
      name += std::to_string(t);
      m_tensors.push_back({name, DType::f64, {values[t].size()}});
    }
  }
  const std::string& path() const override { return m_path; }
  std::string format_name() const override { return "memory"; }
  std::string layout() const override { return "memory"; }
  const std::vector<TensorInfo>& tensors() const override { return m_tensors; }
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override {
    const double* src = m_values[index].data() + offset;
    std::copy(src, src + count, static_cast<double*>(dst));
  }
  std::map<std::string, std::string> metadata() const override { return m_meta; }
  // Gives tensor t a shape of the same element count (they are 1-D otherwise).
  void reshape(std::size_t t, Shape shape) { m_tensors.at(t).shape = std::move(shape); }

 private:
  std::string m_path;
  Values m_values;
  std::map<std::string, std::string> m_meta;
  std::vector<TensorInfo> m_tensors;
};

class MemoryWriter final : public Writer {
 public:
  explicit MemoryWriter(const Plan& plan) {
    for (const auto& e : plan.entries) values.emplace_back(e.info.count(), 0.0);
  }
  bool holds_template_values(std::size_t) const override { return false; }
  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    const auto* s = static_cast<const double*>(src);
    std::copy(s, s + count, values[index].begin() + static_cast<std::ptrdiff_t>(offset));
  }
  void finish() override {}
  Values values;
};

// Runs one federated merge of `clients` (against `base` when not empty) and returns the output's tensors.
// With `state_path`, the server state is resumed from and saved to that HDF5 file. `block_bytes` small forces many
// blocks per tensor.
Values run_federated(const std::vector<Values>& clients, const Values& base, FederatedOptions options,
                     const std::string& state_path = "", std::vector<std::string>* report = nullptr,
                     std::uint64_t block_bytes = Engine::k_default_block_bytes);

}  // namespace wavg::test
