#include "cli/soup_options.hpp"

namespace wavg::cli {

namespace {
constexpr const char* k_task = "Task vectors (--method task-arithmetic, ties, dare-linear, dare-ties, slerp, "
                               "model-stock)";
}  // namespace

TaskOptions TaskCli::resolve(const FederatedOptions& fed, std::vector<double> weights) const {
  TaskOptions o;
  o.method = fed.robust.method;
  o.weights = std::move(weights);
  o.lambda = lambda;
  o.density = density;
  o.t = t;
  o.seed = fed.privacy.seed;
  o.has_base = fed.has_base;
  return o;
}

void add_task_options(CLI::App& app, TaskCli& t) {
  app.add_option("--lambda", t.lambda, "task-arithmetic, ties, dare-*: scale of the combined task vector (default 1)")
      ->group(k_task);
  app.add_option("--density", t.density, "ties, dare-*: fraction of each task vector kept, in (0, 1]")
      ->group(k_task);
  app.add_option("--t", t.t, "slerp: position between input 1 (0) and input 2 (1)")->group(k_task);
}

std::unique_ptr<Backend> task_backend(Device device, const Verbosity& v) {
  note(v, 1, device == Device::cpu ? "device: cpu (--device cpu)"
                                   : "device: cpu (the task-vector methods have no CUDA kernels; --device " +
                                         std::string(name_of(k_device_names, device)) + ")");
  return make_cpu_backend();
}

}  // namespace wavg::cli
