#include "train/model_io.hpp"

#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

#include "pipeline/pipeline.hpp"
#include "wavg/backend.hpp"
#include "wavg/engine.hpp"
#include "wavg/error.hpp"
#include "wavg/method.hpp"
#include "wavg/provenance.hpp"

namespace wavg::train {

namespace {

// Receives the engine's output blocks straight into a model's parameters.
class ModelWriter final : public Writer {
 public:
  explicit ModelWriter(Mlp& model) : m_params(model.params()) {}
  bool holds_template_values(std::size_t) const override { return false; }
  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    WAVG_ASSERT(index < m_params.size() && offset + count <= m_params[index].info.count());
    std::memcpy(m_params[index].data + offset, src, count * sizeof(double));
  }
  void finish() override {}

 private:
  std::vector<ParamRef> m_params;
};

// The architecture as a Keras Sequential model config, so the file says what it holds: Keras rebuilds the model from
// it (keras.models.model_from_json), and wavg align infers the permutation spec from it.
std::string model_config(const Mlp& model) {
  nlohmann::json layers = nlohmann::json::array();
  // "module" lets Keras 3 find the classes (Keras 2.13 writes it too; older Keras ignores it).
  layers.push_back({{"module", "keras.layers"},
                    {"class_name", "InputLayer"},
                    {"config",
                     {{"batch_input_shape", {nullptr, model.layers.front().kernel.rows()}},
                      {"dtype", "float64"},
                      {"name", "input"}}}});
  for (std::size_t i = 0; i < model.layers.size(); ++i)
    layers.push_back({{"module", "keras.layers"},
                      {"class_name", "Dense"},
                      {"config",
                       {{"name", i == 0 ? "dense" : "dense_" + std::to_string(i)},
                        {"dtype", "float64"},
                        {"units", model.layers[i].kernel.cols()},
                        {"activation", i + 1 < model.layers.size() ? "relu" : "softmax"},
                        {"use_bias", true}}}});
  return nlohmann::json{
      {"module", "keras"}, {"class_name", "Sequential"}, {"config", {{"name", "sequential"}, {"layers", layers}}}}
      .dump();
}

}  // namespace

ModelReader::ModelReader(Mlp& model, std::string name) : m_name(std::move(name)), m_params(model.params()) {
  for (const ParamRef& p : m_params) m_infos.push_back(p.info);
}

void ModelReader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  WAVG_ASSERT(index < m_params.size() && offset + count <= m_params[index].info.count());
  std::memcpy(dst, m_params[index].data + offset, count * sizeof(double));
}

void average_models(const std::vector<Mlp*>& workers, const std::vector<double>& weights, Mlp& out) {
  std::vector<ModelReader> readers;
  readers.reserve(workers.size());
  for (std::size_t k = 0; k < workers.size(); ++k) readers.emplace_back(*workers[k], "worker " + std::to_string(k));
  std::vector<Reader*> inputs;
  for (auto& r : readers) inputs.push_back(&r);
  const Plan plan = build_plan(inputs, PlanOptions{});
  auto backend = make_cpu_backend();
  auto method = make_weighted_mean(*backend, weights);
  Engine engine(plan, inputs, *method, *backend);
  engine.verify();
  ModelWriter writer(out);
  engine.run(writer);
}

void save_model(Mlp& model, const std::string& path, const std::string& format) {
  ModelReader reader(model, path);
  // The model comes from training, not from files: the provenance names no inputs.
  auto entries = make_provenance("local-sgd", "train", std::vector<std::string>{}, "").entries();
  entries["model_config"] = model_config(model);
  pipeline::Output out(path, output_format(path, format), Overwrite::yes,
                       {reader.tensors(), nullptr, {}, Provenance(entries)}, {});
  for (std::size_t i = 0; i < reader.tensors().size(); ++i) {
    const std::uint64_t n = reader.tensors()[i].count();
    std::vector<double> values(n);
    reader.read(i, 0, n, values.data());
    out.writer().write(i, 0, n, values.data());
  }
  out.writer().finish();
  out.commit();
}

void load_model(Mlp& model, const std::string& path) {
  auto reader = open_reader(path);
  std::map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < reader->tensors().size(); ++i) by_name.emplace(reader->tensors()[i].name, i);
  std::vector<Problem> problems;
  std::vector<ParamRef> params = model.params();
  for (const ParamRef& p : params) {
    auto it = by_name.find(p.info.name);
    if (it == by_name.end()) {
      problems.push_back({path, p.info.name + ": missing"});
      continue;
    }
    const TensorInfo& t = reader->tensors()[it->second];
    if (t.shape != p.info.shape || (t.dtype != DType::f64 && t.dtype != DType::f32))
      problems.push_back({path, p.info.name + ": expected float64 or float32 " + shape_string(p.info.shape) +
                                    ", found " + std::string(dtype_name(t.dtype)) + " " + shape_string(t.shape)});
  }
  if (!problems.empty()) throw Error(ExitCode::incompatible, std::move(problems));
  for (const ParamRef& p : params) {
    const std::size_t index = by_name.at(p.info.name);
    const std::uint64_t n = p.info.count();
    if (reader->tensors()[index].dtype == DType::f64) {
      reader->read(index, 0, n, p.data);
    } else {
      std::vector<float> values(n);
      reader->read(index, 0, n, values.data());
      for (std::uint64_t i = 0; i < n; ++i) p.data[i] = values[i];
    }
  }
}

std::string extension_for(const std::string& format) { return codec(output_format("", format)).train_extension; }

}  // namespace wavg::train
