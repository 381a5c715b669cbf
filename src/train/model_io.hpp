#pragma once
// The trainer's door to the rest of wavg: models are averaged by the merge engine (an in-memory Reader per worker,
// an in-memory Writer for the result) and saved and loaded through the format registry.

#include <string>
#include <vector>

#include "train/mlp.hpp"
#include "wavg/format.hpp"

namespace wavg::train {

// Presents a model's parameters to the engine as a Reader named `name`.
class ModelReader final : public Reader {
 public:
  ModelReader(Mlp& model, std::string name);
  const std::string& path() const override { return m_name; }
  std::string format_name() const override { return "memory"; }
  std::string layout() const override { return "wavg MLP"; }
  const std::vector<TensorInfo>& tensors() const override { return m_infos; }
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override;
  std::map<std::string, std::string> metadata() const override { return {}; }

 private:
  std::string m_name;
  std::vector<ParamRef> m_params;
  std::vector<TensorInfo> m_infos;
};

// Averages `workers` (plain mean when `weights` is empty) with wavg's engine and mean method into `out`.
void average_models(const std::vector<Mlp*>& workers, const std::vector<double>& weights, Mlp& out);

// Writes `model` to `path` in `format` atomically, replacing any file there.
void save_model(Mlp& model, const std::string& path, const std::string& format);
// Reads the tensors of `model`'s layout from any checkpoint wavg reads; throws Error(incompatible) naming every
// tensor that is missing or has another shape.
void load_model(Mlp& model, const std::string& path);

// Returns the file extension for an output format ("hdf5" -> ".h5").
std::string extension_for(const std::string& format);

}  // namespace wavg::train
