#pragma once
// Pieces every subcommand shares: verbosity, the plan options, and printing to the two streams (opening inputs
// and writing outputs: pipeline/pipeline.hpp).

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "train/mpi_reduce.hpp"
#include "wavg/backend.hpp"
#include "wavg/format.hpp"
#include "pipeline/pipeline.hpp"
#include "wavg/plan.hpp"
#include "wavg/provenance.hpp"

namespace wavg::cli {

using RunFn = std::function<int()>;

struct Verbosity {
  int verbose = 0;
  bool quiet = false;
};

// Adds -v/--verbose (repeatable) and -q/--quiet.
void add_verbosity(CLI::App& app, Verbosity& v);
// Binds an enum option to its names: help shows them as a|b|c with the default, and anything else is refused with
// a plain "'x' is not one of a|b|c" message.
template <typename Enum>
CLI::Option* add_choice(CLI::App& app, const std::string& name, Enum& target,
                        std::vector<std::pair<std::string, Enum>> choices, std::string help) {
  std::string names;
  for (const auto& [n, value] : choices) {
    names += names.empty() ? n : "|" + n;
    if (value == target) help += " (default: " + n + ")";
  }
  return app
      .add_option_function<std::string>(
          name,
          [&target, choices](const std::string& text) {
            for (const auto& [n, value] : choices)
              if (n == text) target = value;
          },
          help)
      ->type_name(names)
      ->check(
          [choices, names](const std::string& text) -> std::string {
            for (const auto& c : choices)
              if (c.first == text) return "";
            return "'" + text + "' is not one of " + names;
          },
          "");
}

// Adds --int-policy and --tensors.
void add_plan_options(CLI::App& app, PlanOptions& options);
// Adds -j/--threads.
void add_threads(CLI::App& app, int& threads);
// Applies -j/--threads (0 leaves OpenMP's default: OMP_NUM_THREADS or all cores).
void apply_threads(int threads);

// Adds --out-dtype (float16, bfloat16, float32 or float64; empty when not given).
void add_out_dtype(CLI::App& app, std::string& out_dtype);

// Adds --algorithm reduce-scatter|gather and --stats FILE.json, the options of averaging over MPI; returns the
// first, so a caller can tell whether it was given.
CLI::Option* add_reduction_options(CLI::App& app, train::Reduction& reduction, std::string& stats);

// Adds --format, its values listed in --help (the writable formats of the registry).
void add_format(CLI::App& app, std::string& format);
// Adds --include GLOB and --exclude GLOB (repeatable; the plan applies them). add_plan_options adds them too.
void add_filters(CLI::App& app, PlanOptions& options);
// Says with -v how many tensors --include / --exclude left out, and their names.
void report_excluded(const Plan& plan, const Verbosity& v);
// Adds --hash xxh3|sha256|none (how the provenance fingerprints the inputs) and --no-hash, its old spelling of none.
void add_hash(CLI::App& app, HashAlgo& hash);

// Adds --tf-state: a TensorFlow output also writes the `checkpoint` state file beside it.
void add_tf_state(CLI::App& app, bool& tf_state);
// Refuses (usage error) --tf-state for an output that is not a TensorFlow checkpoint.
void check_tf_state(bool tf_state, const std::string& format);

// Adds --device auto|cpu|cuda (default: auto).
void add_device(CLI::App& app, std::string& device);
// Returns the backend --device names: `auto` takes the GPU when one is usable and the job reads at least
// k_auto_cuda_bytes, else the CPU; -v says which and why. `cuda` without a usable GPU is an error (exit 1).
std::unique_ptr<Backend> make_backend(const std::string& device, std::uint64_t job_bytes, const Verbosity& v);
// Below this many input bytes, copying to the GPU and back costs more than it saves (not yet measured).
constexpr std::uint64_t k_auto_cuda_bytes = 256ull << 20;

// Returns each input's files (Reader::files()), what its provenance fingerprint covers.
InputFiles input_files(const std::vector<Reader*>& inputs);

// Parses "1,3,2" into numbers; throws a usage error naming the bad item.
std::vector<double> parse_weights(const std::string& text);

// Returns where a subcommand's result line goes: stdout, or stderr when the output itself goes to stdout (-o -).
std::FILE* report_stream(const std::string& output);
// Prints a note on stderr (progress, what was skipped); `level` 0 prints unless --quiet.
void note(const Verbosity& v, int level, const std::string& text);
// Reports input 1's values that are not tensors (a PyTorch checkpoint's epoch): kept, listed with -v, when the
// output is PyTorch written over input 1's pickle; otherwise left out, with a warning.
void note_kept_entries(const Verbosity& v, const Reader& input1, const std::string& format);

// The subcommands, one file each.
RunFn setup_merge(CLI::App& app);
RunFn setup_check(CLI::App& app);
RunFn setup_inspect(CLI::App& app);
RunFn setup_local_sgd(CLI::App& app);
RunFn setup_allreduce(CLI::App& app);
RunFn setup_convert(CLI::App& app);
RunFn setup_diff(CLI::App& app);
RunFn setup_completion(CLI::App& app);
RunFn setup_soup(CLI::App& app);
RunFn setup_align(CLI::App& app);
RunFn setup_eval(CLI::App& app);
RunFn setup_barrier(CLI::App& app);

}  // namespace wavg::cli
