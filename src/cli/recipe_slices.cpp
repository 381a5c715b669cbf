// Passthrough frankenmerges (recipe_slices.hpp): the slices are put together as one virtual model, a Reader whose
// tensors are the source models' under their new names, and that model goes through the conductor
// (pipeline::run) as the one input of a plain mean, which copies every value exactly (x / 1 in double, rounded
// back to its own dtype).

#include "cli/recipe_slices.hpp"

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>

#include "pipeline/pipeline.hpp"
#include "wavg/error.hpp"

namespace wavg::cli {

namespace {

// A layer tensor: what precedes the layer number, the number, and what follows (model.layers.3.mlp.up.weight).
const std::regex k_layer_name(R"(^(.*?(?:^|\.)(?:layers|h|blocks|layer)\.)(\d{1,6})(\..*)$)");

bool before_layers(const std::string& name) {
  return name.find("embed") != std::string::npos || name.find("wte") != std::string::npos ||
         name.find("wpe") != std::string::npos;
}

class SlicedModel final : public Reader {
 public:
  SlicedModel(const std::vector<Slice>& slices, const std::vector<Reader*>& models) : m_path("slices") {
    add_outside(*models.front(), true);
    int next = 0;
    for (std::size_t i = 0; i < slices.size(); ++i) {
      Reader& r = *models[i];
      std::map<long, std::vector<std::pair<std::size_t, std::string>>> by_layer;  // layer -> (tensor, its name)
      for (std::size_t t = 0; t < r.tensors().size(); ++t) {
        std::smatch m;
        const std::string& name = r.tensors()[t].name;
        if (std::regex_match(name, m, k_layer_name))
          by_layer[std::stol(m[2].str())].push_back({t, m[1].str() + "#" + m[3].str()});
      }
      for (int layer = slices[i].first; layer < slices[i].last; ++layer, ++next) {
        const auto it = by_layer.find(layer);
        if (it == by_layer.end())
          throw Error(ExitCode::incompatible, r.path(),
                      "has no layer " + std::to_string(layer) + " (slice layer_range [" +
                          std::to_string(slices[i].first) + ", " + std::to_string(slices[i].last) + "])");
        for (const auto& [t, pattern] : it->second) {
          TensorInfo info = r.tensors()[t];
          info.name =
              pattern.substr(0, pattern.find('#')) + std::to_string(next) + pattern.substr(pattern.find('#') + 1);
          add(info, r, t);
        }
      }
    }
    add_outside(*models.back(), false);
    m_layers = next;
  }

  int layers() const { return m_layers; }
  const std::string& path() const override { return m_path; }
  std::string format_name() const override { return "slices"; }
  std::string layout() const override { return "passthrough slices"; }
  const std::vector<TensorInfo>& tensors() const override { return m_tensors; }
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override {
    m_source[index].first->read(m_source[index].second, offset, count, dst);
  }
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override {
    return m_source[index].first->view(m_source[index].second, offset, count);
  }
  void release(std::size_t index, std::uint64_t offset, std::uint64_t count) override {
    m_source[index].first->release(m_source[index].second, offset, count);
  }
  std::map<std::string, std::string> metadata() const override { return {}; }

 private:
  void add(TensorInfo info, Reader& r, std::size_t t) {
    m_tensors.push_back(std::move(info));
    m_source.emplace_back(&r, t);
  }
  // The tensors outside the layers that come before them (`before`) or after them, from model `r`.
  void add_outside(Reader& r, bool before) {
    for (std::size_t t = 0; t < r.tensors().size(); ++t) {
      const std::string& name = r.tensors()[t].name;
      if (!std::regex_match(name, k_layer_name) && before_layers(name) == before) add(r.tensors()[t], r, t);
    }
  }

  std::string m_path;
  std::vector<TensorInfo> m_tensors;
  std::vector<std::pair<Reader*, std::size_t>> m_source;  // per tensor: its model and index there
  int m_layers = 0;
};

// The first slice's model's config.json with the new number of layers, or nothing when it has none.
std::string sliced_config(const std::string& model, int layers) {
  std::ifstream in(model + "/config.json", std::ios::binary);
  if (!in) return "";
  nlohmann::ordered_json config = nlohmann::ordered_json::parse(in, nullptr, false);
  if (!config.is_object() || !config.contains("num_hidden_layers"))
    throw Error(ExitCode::incompatible, model + "/config.json",
                "has no num_hidden_layers for the frankenmerge's new layer count");
  config["num_hidden_layers"] = layers;
  return config.dump(2) + "\n";
}

// The conductor's steps for a frankenmerge: the opened models become one SlicedModel, the plan's one input, which
// is also the output's template (its tensor list); the first slice's model gives the companion files.
class PassthroughSteps final : public pipeline::Steps {
 public:
  explicit PassthroughSteps(const PassthroughJob& job) : m_job(job) {}

  std::vector<Reader*> inputs(const std::vector<Reader*>& opened) override {
    m_first = opened.front();
    m_model = std::make_unique<SlicedModel>(m_job.slices, opened);
    return {m_model.get()};
  }
  std::string describe(const Method&) override {
    return "passthrough (" + std::to_string(m_model->layers()) + " layers)";
  }
  void output(OutputSpec& spec, const pipeline::Run&) override {
    spec.template_input = m_model.get();
    spec.dropped.clear();
    spec.companions = m_first;
    spec.provenance.add("wavg_recipe", m_job.recipe_text);
    spec.extra_files.emplace_back("mergekit_config.yml", m_job.recipe_text);
    if (const std::string config = sliced_config(m_job.slices.front().model, m_model->layers()); !config.empty())
      spec.extra_files.emplace_back("config.json", config);
  }
  int layers() const { return m_model->layers(); }

 private:
  const PassthroughJob& m_job;
  Reader* m_first = nullptr;
  std::unique_ptr<SlicedModel> m_model;
};

}  // namespace

int run_passthrough(const PassthroughJob& job) {
  pipeline::Job run_job;
  for (const Slice& s : job.slices) run_job.inputs.push_back(s.model);
  run_job.output = pipeline::check_target({job.output, job.format, job.overwrite}, run_job.inputs);
  run_job.command = "merge";
  run_job.out_dtype = job.out_dtype;
  run_job.hash = job.hash;
  PassthroughSteps steps(job);
  const pipeline::Run run = pipeline::run(run_job, steps);
  if (!job.verbosity.quiet)
    std::fprintf(report_stream(job.output), "passthrough: %zu tensors of %zu slices (%d layers) into %s\n",
                 run.plan.entries.size(), job.slices.size(), steps.layers(), job.output.c_str());
  return 0;
}

}  // namespace wavg::cli
