// Sliced models (recipe_slices.hpp): a virtual Reader per input position whose tensors are its sources' under
// their new names. A passthrough frankenmerge is the one position's model through the conductor (pipeline::run) as
// the one input of a plain mean, which copies every value exactly (x / 1 in double, rounded back to its own dtype).

#include "cli/recipe_slices.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "pipeline/pipeline.hpp"
#include "wavg/error.hpp"
#include "wavg/tensor_values.hpp"

namespace wavg::cli {

namespace {

// One source opened: its reader and its layers.
struct Segment {
  Reader* reader;
  Slice slice;
};

class SlicedModel final : public Reader {
 public:
  // `segments`: the sources of one position, by slice.
  explicit SlicedModel(const std::vector<Segment>& segments) {
    for (const Segment& s : segments) {
      const std::string& p = s.reader->path();
      if (std::find(m_models.begin(), m_models.end(), s.reader) == m_models.end()) {
        m_models.push_back(s.reader);
        m_path += (m_path.empty() ? "" : " + ") + p;
      }
    }
    add_outside(*segments.front().reader, true);
    int next = 0;
    for (const Segment& s : segments) {
      Reader& r = *s.reader;
      std::map<long, std::vector<std::pair<std::size_t, LayerName>>> by_layer;  // layer -> (tensor, its name)
      for (std::size_t t = 0; t < r.tensors().size(); ++t)
        if (auto n = layer_name(r.tensors()[t].name)) by_layer[n->layer].emplace_back(t, std::move(*n));
      for (int layer = s.slice.first; layer < s.slice.last; ++layer, ++next) {
        const auto it = by_layer.find(layer);
        if (it == by_layer.end())
          throw Error(ExitCode::incompatible, r.path(),
                      "has no layer " + std::to_string(layer) + " (slice layer_range [" +
                          std::to_string(s.slice.first) + ", " + std::to_string(s.slice.last) + "])");
        for (const auto& [t, n] : it->second) {
          TensorInfo info = r.tensors()[t];
          info.name = n.prefix + std::to_string(next) + n.suffix;
          add(info, r, t);
        }
      }
    }
    add_outside(*segments.back().reader, false);
  }

  const std::string& path() const override { return m_path; }
  std::vector<std::string> files() const override {
    std::vector<std::string> out;
    for (const Reader* r : m_models)
      for (std::string& f : r->files()) out.push_back(std::move(f));
    return out;
  }
  std::string format_name() const override { return "slices"; }
  std::string layout() const override { return "slices"; }
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
  void prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) override {
    m_source[index].first->prefetch(m_source[index].second, offset, count);
  }
  std::vector<std::uint64_t> boundaries(std::size_t index) const override {
    return m_source[index].first->boundaries(m_source[index].second);
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
      if (!layer_name(name) && before_layers(name) == before) add(r.tensors()[t], r, t);
    }
  }

  std::string m_path;             // its models' paths, joined by " + "
  std::vector<Reader*> m_models;  // each once
  std::vector<TensorInfo> m_tensors;
  std::vector<std::pair<Reader*, std::size_t>> m_source;  // per tensor: its model and index there
};

}  // namespace

std::vector<std::string> SlicedSources::models() const {
  std::vector<std::string> out;
  const auto add = [&](const std::vector<Slice>& slices) {
    for (const Slice& s : slices)
      if (std::find(out.begin(), out.end(), s.model) == out.end()) out.push_back(s.model);
  };
  add(base);
  for (const auto& position : inputs) add(position);
  return out;
}

int SlicedSources::layers() const {
  int n = 0;
  for (const Slice& s : inputs.front()) n += s.last - s.first;
  return n;
}

SlicedInputs::SlicedInputs(const SlicedSources& sources, const std::vector<Reader*>& opened) {
  const std::vector<std::string> models = sources.models();
  const auto segments = [&](const std::vector<Slice>& slices) {
    std::vector<Segment> out;
    for (const Slice& s : slices)
      out.push_back({opened[std::find(models.begin(), models.end(), s.model) - models.begin()], s});
    return out;
  };
  for (const auto& position : sources.inputs) m_inputs.push_back(std::make_unique<SlicedModel>(segments(position)));
  if (!sources.base.empty()) m_base = std::make_unique<SlicedModel>(segments(sources.base));
}

SlicedInputs::~SlicedInputs() = default;

std::vector<Reader*> SlicedInputs::inputs() const { return pipeline::raw(m_inputs); }

std::unique_ptr<Reader> SlicedInputs::take_base() { return std::move(m_base); }

std::string sliced_config(const std::string& folder, int layers) {
  std::ifstream in(folder + "/config.json", std::ios::binary);
  if (!in) return "";
  nlohmann::ordered_json config = nlohmann::ordered_json::parse(in, nullptr, false);
  if (!config.is_object() || !config.contains("num_hidden_layers"))
    throw Error(ExitCode::incompatible, folder + "/config.json",
                "has no num_hidden_layers for the sliced model's new layer count");
  config["num_hidden_layers"] = layers;
  return config.dump(2) + "\n";
}

namespace {

// The conductor's steps for a frankenmerge: the opened models become one sliced model, the plan's one input, which
// is also the output's template (its tensor list); the first slice's model gives the companion files.
class PassthroughSteps final : public pipeline::Steps {
 public:
  explicit PassthroughSteps(const PassthroughJob& job) : m_job(job) {}

  std::vector<Reader*> inputs(const std::vector<Reader*>& opened) override {
    m_first = opened.front();
    m_model = std::make_unique<SlicedInputs>(sources(), opened);
    return m_model->inputs();
  }
  std::string describe(const Method&) override { return "passthrough (" + std::to_string(layers()) + " layers)"; }
  void output(OutputSpec& spec, const pipeline::Run&) override {
    spec.template_input = m_model->inputs().front();
    spec.dropped.clear();
    spec.companions = m_first;
    spec.provenance.add("wavg_recipe", m_job.recipe_text);
    spec.extra_files.emplace_back("mergekit_config.yml", m_job.recipe_text);
    if (const std::string config = sliced_config(m_job.slices.front().model, layers()); !config.empty())
      spec.extra_files.emplace_back("config.json", config);
  }
  int layers() const { return sources().layers(); }
  SlicedSources sources() const { return {{}, {m_job.slices}}; }

 private:
  const PassthroughJob& m_job;
  Reader* m_first = nullptr;
  std::unique_ptr<SlicedInputs> m_model;
};

}  // namespace

int run_passthrough(const PassthroughJob& job) {
  PassthroughSteps steps(job);
  pipeline::Job run_job;
  run_job.inputs = steps.sources().models();
  run_job.output = pipeline::check_target({job.output, job.format, job.overwrite}, run_job.inputs);
  run_job.command = "merge";
  run_job.out_dtype = job.out_dtype;
  run_job.hash = job.hash;
  const pipeline::Run run = pipeline::run(run_job, steps);
  if (!job.verbosity.quiet)
    std::fprintf(report_stream(job.output), "passthrough: %zu tensors of %zu slices (%d layers) into %s\n",
                 run.plan.entries.size(), job.slices.size(), steps.layers(), job.output.c_str());
  return 0;
}

}  // namespace wavg::cli
