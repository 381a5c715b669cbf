#pragma once
// The server side of a federated round: client checkpoints (or their updates) in, the next global model out.
// Each client's update u_k = x_k - base (or x_k itself with --inputs-are deltas) may be clipped to an L2 norm
// (differential privacy), the updates are aggregated (mean, weighted mean, or a robust method), Gaussian noise may
// be added, and a server optimizer turns the aggregate into the step added to the base. The formulas are in
// wavg-merge(1); the essay on how this streams is at the top of src/core/methods/federated.cpp.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "wavg/backend.hpp"
#include "wavg/error.hpp"
#include "wavg/format.hpp"
#include "wavg/method.hpp"
#include "wavg/method_spec.hpp"
#include "wavg/names.hpp"
#include "wavg/plan.hpp"

namespace wavg {

enum class InputKind { models, deltas };

inline constexpr std::array<Named<InputKind>, 2> k_input_kind_names{
    {{"models", InputKind::models}, {"deltas", InputKind::deltas}}};
// --server-opt (none: no optimizer, the update is added; not a value the option takes).
inline constexpr std::array<Named<ServerOptKind>, 5> k_server_opt_names{{{"sgd", ServerOptKind::sgd},
                                                                         {"momentum", ServerOptKind::momentum},
                                                                         {"adam", ServerOptKind::adam},
                                                                         {"yogi", ServerOptKind::yogi},
                                                                         {"adagrad", ServerOptKind::adagrad}}};

struct RobustOptions {
  const MethodSpec* method = &default_method();  // --method: its row
  std::optional<double> trim;    // trimmed-mean: fraction cut at each end
  std::optional<int> byzantine;  // krum, multi-krum: F
  std::optional<int> select;     // multi-krum: M
  double gm_tol = 1e-6;          // geometric-median: relative decrease of the objective that stops Weiszfeld
  int gm_max_iter = 100;         // geometric-median: iteration cap
  double gm_eps = 1e-8;          // geometric-median: floor on distances (smoothed Weiszfeld)
};

struct PrivacyOptions {
  double clip = 0;                    // 0: no clipping
  double noise_multiplier = 0;        // 0: no noise
  std::optional<std::uint64_t> seed;  // none: drawn from the system's entropy source
};

// How much a stale update counts (FedAsync, Xie et al. 2019): constant s = 1; polynomial s = (1 + tau)^-a;
// hinge s = 1 for tau <= b, else 1 / (a (tau - b) + 1).
struct StalenessFn {
  enum class Kind { constant, polynomial, hinge };
  Kind kind = Kind::polynomial;
  double a = 0.5, b = 0;
};

struct FederatedOptions {
  RobustOptions robust;
  PrivacyOptions privacy;
  ServerStepParams server;                             // kind none: the aggregate update is added as is
  std::optional<double> server_lr, beta1, beta2, tau;  // as given; validate_federated fills `server`
  InputKind inputs = InputKind::models;
  bool has_base = false;
  bool has_state = false;
  std::vector<double> weights;              // empty: equal weights
  std::optional<StalenessFn> staleness_fn;  // --staleness given
  std::vector<double> staleness;            // s(tau_k) per input, filled from the metadata once the inputs are open
  std::optional<double> mix;                // --mix alpha: the server step is alpha times the aggregate
};

// Tells whether the options ask for more than the plain or weighted mean of full models.
bool is_federated(const FederatedOptions& o);
// Checks the combination of options against the number of inputs and fills the server optimizer's defaults.
// Throws a usage error (exit 2) giving the reason.
void validate_federated(FederatedOptions& o, std::size_t inputs);

// --- fedavg.cpp ---

// Returns the metadata entry `key` of `r` as a finite number, or appends a problem naming the file (and `option`,
// the option that needs it) when it is missing or not a number.
std::optional<double> metadata_number(const Reader& r, const std::string& key, const std::string& option,
                                      std::vector<Problem>& problems);

// Reads each input's weight from its metadata entry `key` (FedAvg: the number of training examples). Throws
// Error(runtime) naming every file whose entry is missing, not a number or negative, or all files when the
// weights sum to zero.
std::vector<double> weights_from_metadata(const std::vector<Reader*>& inputs, const std::string& key);

// --- staleness.cpp ---

// Parses --staleness-fn: constant, polynomial:a=A or hinge:a=A,b=B. Throws a usage error otherwise.
StalenessFn parse_staleness_fn(const std::string& text);
// Returns s(tau) for a staleness tau >= 0.
double staleness_weight(const StalenessFn& fn, double tau);
// Returns s(tau_k) for each input, tau_k = the base's metadata entry `key` minus input k's (the round each client
// started from). Throws Error(runtime) naming every file whose entry is missing, not a whole number, or later than
// the base's.
std::vector<double> staleness_from_metadata(const Reader& base, const std::vector<Reader*>& inputs,
                                            const std::string& key, const StalenessFn& fn);

// --- robust.cpp: what the robust methods decide from whole-model statistics ---

// Returns how many inputs trimmed-mean cuts at each end: floor(trim * n), with a 1e-9 tolerance so 0.1 * 10 is 1.
std::uint32_t trim_count(double trim, std::size_t n);
// Returns each input's Krum score: the sum of its n - f - 2 smallest squared distances to the other inputs.
std::vector<double> krum_scores(const std::vector<double>& dist, std::size_t n, std::size_t f);
// Returns the indices of the m lowest scores, ties to the lower index, in increasing index order.
std::vector<std::size_t> lowest_scores(const std::vector<double>& scores, std::size_t m);

struct WeiszfeldResult {
  std::vector<double> coeffs;  // the geometric median as an affine combination of the inputs
  int iterations = 0;
  bool converged = false;
};
// Runs Weiszfeld's algorithm in the span of the inputs, from their squared distances alone.
WeiszfeldResult weiszfeld(const std::vector<double>& dist, const std::vector<double>& weights, double tol, int max_iter,
                          double eps);

// --- dp.cpp ---

// Returns min(1, clip / ||u_k||) for each input, from the sums of squares; 1 for a zero update.
std::vector<double> clip_scales(const std::vector<double>& sum_squares, double clip);
// Returns a seed from the system's entropy source.
std::uint64_t random_seed();

// --- server_opt.cpp: the optimizer's moments between rounds ---

class ServerState {
 public:
  // Checks `existing`, the state file at `path` as the pipeline opened it (null when there is none yet: a fresh
  // start), against the plan and the optimizer. Throws Error(incompatible) naming the file when it does not match.
  ServerState(std::string path, std::unique_ptr<Reader> existing, const Plan& plan, const ServerStepParams& params);
  ~ServerState();

  const std::string& path() const { return m_path; }
  // Returns the number of rounds already done (0 for a fresh state).
  std::uint64_t rounds() const { return m_rounds; }
  bool resumed() const { return m_reader != nullptr; }
  bool uses_m() const;
  bool uses_v() const;
  // Reads the moments of plan entry `entry` (m: 0, v: tau^2 when fresh); unused ones are left alone.
  void read(std::size_t entry, std::uint64_t offset, std::uint64_t count, double* m, double* v);
  // Returns what the next state file holds, for the output that writes it.
  const OutputSpec& output_spec() const { return m_spec; }
  // Starts writing the next state through `writer` (an output's, at `path`); call once, before write().
  void begin_write(Writer& writer);
  void write(std::size_t entry, std::uint64_t offset, std::uint64_t count, const double* m, const double* v);
  // Writes the round counter and completes the writer; the caller then commits the output.
  void finish();

 private:
  std::string m_path;
  const Plan& m_plan;
  ServerStepParams m_params;
  std::uint64_t m_rounds = 0;
  std::unique_ptr<Reader> m_reader;
  std::vector<std::size_t> m_read_m, m_read_v;    // per plan entry: index in the old state
  std::vector<std::size_t> m_write_m, m_write_v;  // per plan entry: index in the new state
  OutputSpec m_spec;
  Writer* m_writer = nullptr;
};

// --- federated.cpp ---

// A federated method; its report() says what clipping, selection, Weiszfeld and the server round did.
class FederatedMethod : public Method {};

// Builds the method; `state` (may be null) must outlive it. The options must have passed validate_federated.
std::unique_ptr<FederatedMethod> make_federated(Backend& backend, const Plan& plan, const FederatedOptions& options,
                                                ServerState* state);

}  // namespace wavg
