#include "cli/soup_options.hpp"

namespace wavg::cli {

namespace {
constexpr const char* k_task = "Task vectors (--method task-arithmetic, ties, dare-linear, dare-ties, slerp, "
                               "model-stock)";

template <class T> std::optional<T> given(const CLI::Option* opt, T value) {
  return opt && opt->count() > 0 ? std::optional<T>(value) : std::nullopt;
}
}  // namespace

TaskOptions TaskCli::resolve(const FederatedOptions& fed, std::vector<double> weights) const {
  TaskOptions o;
  o.method = fed.robust.method;
  o.weights = std::move(weights);
  o.lambda = given(lambda_opt, lambda);
  o.density = given(density_opt, density);
  o.t = given(t_opt, t);
  o.seed = fed.privacy.seed;
  o.has_base = fed.has_base;
  return o;
}

void add_task_options(CLI::App& app, TaskCli& t) {
  t.lambda_opt = app.add_option("--lambda", t.lambda,
                                "task-arithmetic, ties, dare-*: scale of the combined task vector (default 1)")
                     ->group(k_task);
  t.density_opt =
      app.add_option("--density", t.density, "ties, dare-*: fraction of each task vector kept, in (0, 1]")
          ->group(k_task);
  t.t_opt = app.add_option("--t", t.t, "slerp: position between input 1 (0) and input 2 (1)")->group(k_task);
}

std::unique_ptr<Backend> task_backend(const std::string& device, const Verbosity& v) {
  note(v, 1, device == "cpu" ? "device: cpu (--device cpu)"
                             : "device: cpu (the task-vector methods have no CUDA kernels; --device " + device + ")");
  return make_cpu_backend();
}

}  // namespace wavg::cli
