#include "cli/federated_options.hpp"

#include "cli/common.hpp"
#include "wavg/method_spec.hpp"

namespace wavg::cli {

namespace {
constexpr const char* k_averaging = "Averaging";
constexpr const char* k_robust = "Robust aggregation (--method)";
constexpr const char* k_server = "Server optimizer (needs --base)";
constexpr const char* k_privacy = "Differential privacy";
constexpr const char* k_async = "Asynchronous rounds (needs --base)";
constexpr const char* k_default_staleness_fn = "polynomial:a=0.5";
}  // namespace

void FederatedCli::resolve() {
  options.has_base = !base.empty();
  options.has_state = !state.empty();
  if (!staleness.empty())
    options.staleness_fn = parse_staleness_fn(staleness_fn.value_or(k_default_staleness_fn));
  else if (staleness_fn)
    fail_usage("--staleness-fn needs --staleness KEY");
}

void add_federated_options(CLI::App& app, FederatedCli& f) {
  for (const char* name : {"--weights", "--int-policy", "--tensors"})
    if (CLI::Option* opt = app.get_option_no_throw(name)) opt->group(k_averaging);
  FederatedOptions& o = f.options;
  app.add_option("--weight-by", f.weight_by,
                 "Weight each input by this numeric metadata entry (FedAvg: --weight-by num_examples)")
      ->type_name("KEY")
      ->group(k_averaging);
  app.add_option("--base", f.base, "The current global model; the inputs' updates are taken against it")
      ->group(k_averaging);
  add_choice(app, "--inputs-are", o.inputs, k_input_kind_names,
             "The inputs are full models or updates (client - global)")
      ->group(k_averaging);
  add_choice(app, "--method", o.robust.method, method_names(), "How the inputs are combined")->group(k_averaging);

  app.add_option("--trim", o.robust.trim,
                 methods_taking("--trim") + ": fraction of inputs cut at each end, in [0, 0.5)")
      ->group(k_robust);
  app.add_option("--byzantine", o.robust.byzantine,
                 methods_taking("--byzantine") + ": inputs that may be corrupted (F)")
      ->group(k_robust);
  app.add_option("--select", o.robust.select, methods_taking("--select") + ": how many inputs to average (M)")
      ->group(k_robust);
  app.add_option("--gm-tol", o.robust.gm_tol, methods_taking("--gm-tol") + ": relative decrease that stops Weiszfeld")
      ->capture_default_str()
      ->group(k_robust);
  app.add_option("--gm-max-iter", o.robust.gm_max_iter, methods_taking("--gm-max-iter") + ": most Weiszfeld iterations")
      ->capture_default_str()
      ->group(k_robust);
  app.add_option("--gm-eps", o.robust.gm_eps, methods_taking("--gm-eps") + ": floor on distances (smoothed Weiszfeld)")
      ->capture_default_str()
      ->group(k_robust);

  add_choice(app, "--server-opt", o.server.kind, k_server_opt_names, "Server optimizer (default: add the update)")
      ->group(k_server);
  app.add_option("--server-lr", o.server_lr,
                 "Server learning rate (default 1 for sgd and momentum, "
                 "0.01 for adam, yogi, adagrad)")
      ->group(k_server);
  app.add_option("--beta1", o.beta1, "First-moment decay, momentum's beta (default 0.9)")->group(k_server);
  app.add_option("--beta2", o.beta2, "Second-moment decay of adam and yogi (default 0.99)")->group(k_server);
  app.add_option("--tau", o.tau, "Adaptivity tau of adam, yogi, adagrad (default 1e-3)")->group(k_server);
  app.add_option("--state", f.state, "Server state file: resumed when it exists, saved after the round")
      ->group(k_server);

  app.add_option("--clip", o.privacy.clip, "Clip each update to this L2 norm over the whole model")->group(k_privacy);
  app.add_option("--noise-multiplier", o.privacy.noise_multiplier,
                 "Add Gaussian noise of sigma = Z * clip / n to the mean update")
      ->group(k_privacy);
  app.add_option("--seed", o.privacy.seed,
                 "Seed of the noise, or of DARE's and DELLA's drop masks (default: a random seed)")
      ->group(k_privacy);

  app.add_option("--staleness", f.staleness,
                 "Weight each update by s(tau), tau = this metadata entry (a round) in the base minus the input's")
      ->type_name("KEY")
      ->group(k_async);
  app.add_option("--staleness-fn", f.staleness_fn,
                 "s(tau): constant, polynomial:a=A ((1+tau)^-A) or hinge:a=A,b=B (1 up to B, then 1/(A(tau-B)+1))")
      ->default_str(k_default_staleness_fn)
      ->group(k_async);
  app.add_option("--mix", o.mix, "alpha in (0, 1]: next = base + alpha * the aggregate update")
      ->type_name("ALPHA")
      ->group(k_async);
}

}  // namespace wavg::cli
