#include "cli/federated_options.hpp"

#include "cli/common.hpp"

namespace wavg::cli {

namespace {
constexpr const char* k_averaging = "Averaging";
constexpr const char* k_robust = "Robust aggregation (--method)";
constexpr const char* k_server = "Server optimizer (needs --base)";
constexpr const char* k_privacy = "Differential privacy";
constexpr const char* k_async = "Asynchronous rounds (needs --base)";

template <class T> std::optional<T> given(const CLI::Option* opt, T value) {
  return opt && opt->count() > 0 ? std::optional<T>(value) : std::nullopt;
}
}  // namespace

void FederatedCli::resolve() {
  options.has_base = !base.empty();
  options.has_state = !state.empty();
  options.robust.trim = given(trim_opt, trim);
  options.robust.byzantine = given(byzantine_opt, byzantine);
  options.robust.select = given(select_opt, select);
  options.privacy.seed = given(seed_opt, seed);
  options.server_lr = given(lr_opt, server_lr);
  options.beta1 = given(beta1_opt, beta1);
  options.beta2 = given(beta2_opt, beta2);
  options.tau = given(tau_opt, tau);
  options.mix = given(mix_opt, mix);
  if (!staleness.empty()) options.staleness_fn = parse_staleness_fn(staleness_fn);
  else if (staleness_fn_opt && staleness_fn_opt->count() > 0) fail_usage("--staleness-fn needs --staleness KEY");
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
  add_choice(app, "--inputs-are", o.inputs, {{"models", InputKind::models}, {"deltas", InputKind::deltas}},
             "The inputs are full models or updates (client - global)")
      ->group(k_averaging);
  add_choice(app, "--method", o.robust.method,
             {{"mean", Aggregator::mean},
              {"median", Aggregator::median},
              {"trimmed-mean", Aggregator::trimmed_mean},
              {"krum", Aggregator::krum},
              {"multi-krum", Aggregator::multi_krum},
              {"geometric-median", Aggregator::geometric_median},
              {"task-arithmetic", Aggregator::task_arithmetic},
              {"ties", Aggregator::ties},
              {"dare-linear", Aggregator::dare_linear},
              {"dare-ties", Aggregator::dare_ties},
              {"slerp", Aggregator::slerp},
              {"model-stock", Aggregator::model_stock}},
             "How the inputs are combined")
      ->group(k_averaging);

  f.trim_opt = app.add_option("--trim", f.trim, "trimmed-mean: fraction of inputs cut at each end, in [0, 0.5)")
                   ->group(k_robust);
  f.byzantine_opt = app.add_option("--byzantine", f.byzantine, "krum, multi-krum: inputs that may be corrupted (F)")
                        ->group(k_robust);
  f.select_opt =
      app.add_option("--select", f.select, "multi-krum: how many inputs to average (M)")->group(k_robust);
  app.add_option("--gm-tol", o.robust.gm_tol, "geometric-median: relative decrease that stops Weiszfeld")
      ->default_str("1e-6")
      ->group(k_robust);
  app.add_option("--gm-max-iter", o.robust.gm_max_iter, "geometric-median: most Weiszfeld iterations")
      ->default_str("100")
      ->group(k_robust);
  app.add_option("--gm-eps", o.robust.gm_eps, "geometric-median: floor on distances (smoothed Weiszfeld)")
      ->default_str("1e-8")
      ->group(k_robust);

  add_choice(app, "--server-opt", o.server.kind,
             {{"sgd", ServerOptKind::sgd},
              {"momentum", ServerOptKind::momentum},
              {"adam", ServerOptKind::adam},
              {"yogi", ServerOptKind::yogi},
              {"adagrad", ServerOptKind::adagrad}},
             "Server optimizer (default: add the update)")
      ->group(k_server);
  f.lr_opt = app.add_option("--server-lr", f.server_lr, "Server learning rate (default 1 for sgd and momentum, "
                                                        "0.01 for adam, yogi, adagrad)")
                 ->group(k_server);
  f.beta1_opt = app.add_option("--beta1", f.beta1, "First-moment decay, momentum's beta (default 0.9)")
                    ->group(k_server);
  f.beta2_opt = app.add_option("--beta2", f.beta2, "Second-moment decay of adam and yogi (default 0.99)")
                    ->group(k_server);
  f.tau_opt =
      app.add_option("--tau", f.tau, "Adaptivity tau of adam, yogi, adagrad (default 1e-3)")->group(k_server);
  app.add_option("--state", f.state, "Server state file: resumed when it exists, saved after the round")
      ->group(k_server);

  app.add_option("--clip", o.privacy.clip, "Clip each update to this L2 norm over the whole model")
      ->group(k_privacy);
  app.add_option("--noise-multiplier", o.privacy.noise_multiplier,
                 "Add Gaussian noise of sigma = Z * clip / n to the mean update")
      ->group(k_privacy);
  f.seed_opt = app.add_option("--seed", f.seed, "Seed of the noise, or of DARE's drop mask (default: a random seed)")->group(k_privacy);

  app.add_option("--staleness", f.staleness,
                 "Weight each update by s(tau), tau = this metadata entry (a round) in the base minus the input's")
      ->type_name("KEY")
      ->group(k_async);
  f.staleness_fn_opt = app.add_option("--staleness-fn", f.staleness_fn,
                                      "s(tau): constant, polynomial:a=A ((1+tau)^-A) or hinge:a=A,b=B (1 up to B, "
                                      "then 1/(A(tau-B)+1))")
                           ->default_str("polynomial:a=0.5")
                           ->group(k_async);
  f.mix_opt = app.add_option("--mix", f.mix, "alpha in (0, 1]: next = base + alpha * the aggregate update")
                  ->type_name("ALPHA")
                  ->group(k_async);
}

}  // namespace wavg::cli
