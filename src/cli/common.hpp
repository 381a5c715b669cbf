#pragma once
// Pieces every subcommand shares: verbosity, the plan options, and printing to the two streams (opening inputs
// and writing outputs: pipeline/pipeline.hpp).

#include <CLI/CLI.hpp>

#include <array>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ranges>
#include <string>
#include <type_traits>
#include <vector>

#include "cli/usage_errors.hpp"
#include "pipeline/pipeline.hpp"
#include "wavg/backend.hpp"
#include "wavg/format.hpp"
#include "wavg/names.hpp"
#include "wavg/plan.hpp"
#include "wavg/provenance.hpp"

namespace wavg::train {
enum class Reduction;  // train/reduction.hpp, for the two subcommands that average over MPI
}  // namespace wavg::train

namespace wavg::cli {

using RunFn = std::function<int()>;

// How a job shows its progress on stderr (--progress): a line redrawn on a terminal, one JSON line per step for a
// program that runs wavg, or nothing.
enum class ProgressStyle { automatic, json, none };

struct Verbosity {
  int verbose = 0;
  bool quiet = false;
  ProgressStyle progress = ProgressStyle::automatic;
};

// Returns the verbosity of a rank other than 0 in a distributed run: quiet, rank 0 speaking for every rank.
Verbosity quiet_rank(Verbosity v);
// Says at -v how a distributed run shared its work: each rank's bytes read and written, against an even share.
void report_division(const pipeline::Division& division, const Verbosity& v);

// Adds -v/--verbose (repeatable) and -q/--quiet.
void add_verbosity(CLI::App& app, Verbosity& v);
// Adds --progress auto|json|none (the subcommands that show a progress line).
void add_progress(CLI::App& app, Verbosity& v);
// Binds an enum option to its name table (wavg/names.hpp): help shows the names as a|b|c with the default, the
// completions offer them, an alias is accepted unlisted, and anything else is refused with a plain "'x' is not one
// of a|b|c", and a suggestion when x is close to a name ("; did you mean 'median'?"). `target` is the enum, or a
// std::optional of it for an option without a default.
template <typename Target, typename Table>
CLI::Option* add_choice(CLI::App& app, const std::string& name, Target& target, const Table& table, std::string help) {
  using Row = std::ranges::range_value_t<Table>;
  std::vector<Row> rows(std::ranges::begin(table), std::ranges::end(table));
  std::string names;
  for (const Row& r : rows) {
    if (r.alias) continue;
    names += (names.empty() ? "" : "|") + std::string(r.name);
    if constexpr (std::is_same_v<Target, std::remove_cv_t<decltype(r.value)>>)
      if (r.value == target) help += " (default: " + std::string(r.name) + ")";
  }
  return app
      .add_option_function<std::string>(
          name,
          [&target, rows](const std::string& text) {
            for (const Row& r : rows)
              if (r.name == text) target = r.value;
          },
          help)
      ->type_name(names)
      ->check(
          [rows, names](const std::string& text) -> std::string {
            std::vector<std::string> all;
            for (const Row& r : rows) {
              if (r.name == text) return "";
              all.emplace_back(r.name);
            }
            return "'" + text + "' is not one of " + names + did_you_mean(text, all);
          },
          "");
}

// The enum a choice option sets: Target itself, or T of std::optional<T>.
template <typename Target>
struct ChoiceEnum {
  using type = Target;
};
template <typename Enum>
struct ChoiceEnum<std::optional<Enum>> {
  using type = Enum;
};

// The same for an enum only the command line names (local-sgd's --shard), its table written at the call.
template <typename Target>
CLI::Option* add_choice(CLI::App& app, const std::string& name, Target& target,
                        std::initializer_list<Named<typename ChoiceEnum<Target>::type>> table, std::string help) {
  return add_choice(app, name, target, std::vector(table), std::move(help));
}

// Adds --int-policy and --tensors.
void add_plan_options(CLI::App& app, PlanOptions& options);
// Adds -j/--threads.
void add_threads(CLI::App& app, int& threads);
// Applies -j/--threads; 0 leaves OMP_NUM_THREADS where set, else takes the cores no other program uses now
// (free_cores_now): on a busy machine a worker on a taken core only holds a parallel loop back.
void apply_threads(int threads);
// Makes idle OpenMP threads sleep (OMP_WAIT_POLICY=passive) unless the user chose a policy: sets the variable and
// executes wavg again, once, for the subcommands that run parallel loops; returns in the process that runs
// (wait_policy.cpp says why).
void use_passive_wait_policy(char** argv);
// Runs every parallel loop on one thread when an address-space limit (ulimit -v) leaves too little room for the
// stacks of `threads` OpenMP threads (0: OpenMP's default count), which libgomp would otherwise fail to create and
// exit on, or when those threads cannot be made now; else makes OpenMP's threads now, before any input takes the
// room. Says so when `verbose`. Results are the same for any thread count (wait_policy.cpp says why).
void fit_threads_to_address_space(int threads, bool verbose);

// Adds --out-dtype float16|bfloat16|float32|float64 (or f16, bf16, f32, f64, and half, fp16, float, fp32, double,
// fp64; unset when not given); given `block_type`, also the block types the registry's rows name (GGUF's q8_0,
// q4_0), which set `out_dtype` to float32 (the values the writer encodes) and `block_type` to the name.
void add_out_dtype(CLI::App& app, std::optional<DType>& out_dtype, std::string* block_type = nullptr);
// Returns the name --out-dtype records in the provenance ("" when not given).
std::string out_dtype_name(const std::optional<DType>& out_dtype);

// Adds --algorithm reduce-scatter|gather and --stats FILE.json, the options of averaging over MPI; returns the
// first, so a caller can tell whether it was given.
CLI::Option* add_reduction_options(CLI::App& app, train::Reduction& reduction, std::string& stats);

// Adds the output options: -o/--output (required), --format (its values listed in --help: the registry's writable
// formats) and -f/--force.
void add_output(CLI::App& app, std::string& output, std::string& format, bool& force,
                const std::string& output_help = "Output checkpoint",
                const std::string& force_help = "Replace an existing output");
// Adds --include GLOB and --exclude GLOB (repeatable; the plan applies them). add_plan_options adds them too.
void add_filters(CLI::App& app, PlanOptions& options);
// Says with -v how many tensors --include / --exclude left out, and their names.
void report_excluded(const Plan& plan, const Verbosity& v);
// Adds --hash xxh3|sha256|none (how the provenance fingerprints the inputs) and --no-hash, its old spelling of none.
void add_hash(CLI::App& app, HashAlgo& hash);

// Adds --tf-state: a TensorFlow output also writes the `checkpoint` state file beside it.
void add_tf_state(CLI::App& app, bool& tf_state);

// Where the arithmetic runs (--device).
enum class Device { automatic, cpu, cuda };
inline constexpr std::array<Named<Device>, 3> k_device_names{
    {{"auto", Device::automatic}, {"cpu", Device::cpu}, {"cuda", Device::cuda}}};
// Adds --shard-size SIZE: the largest shard of a folder output; bytes, or a number with KB/MB/GB (powers of 1000,
// as huggingface_hub counts) or KiB/MiB/GiB. 0 when not given.
void add_shard_size(CLI::App& app, std::uint64_t& bytes);

// Adds --device auto|cpu|cuda (default: auto).
void add_device(CLI::App& app, Device& device);
// Returns the backend --device names; -v says which and why. `cuda` without a usable GPU is an error (exit 1).
// `auto` is the CPU: measured on an H200 (README's GPU section), the GPU was slower end to end for every method
// and size tried, its inputs crossing PCIe from the host and CUDA's start costing 0.3 s, so nothing yet earns
// auto a rule that picks it.
std::unique_ptr<Backend> make_backend(Device device, const Verbosity& v);

// Adds what a subcommand that writes through the pipeline takes after its output and its own options: --out-dtype
// and --hash, then --tf-state and --shard-size where Options has them (a merged or converted output, not a soup's).
// One place, so that each such subcommand offers them in one order with one help text.
template <typename Options>
void add_written_options(CLI::App& app, Options& o) {
  if constexpr (requires { o.block_type; })
    add_out_dtype(app, o.out_dtype, &o.block_type);
  else
    add_out_dtype(app, o.out_dtype);
  add_hash(app, o.hash);
  if constexpr (requires { o.tf_state; }) add_tf_state(app, o.tf_state);
  if constexpr (requires { o.shard_size; }) add_shard_size(app, o.shard_size);
}
// Adds the options that close such a subcommand's list: -j/--threads, --device where Options has one, -v/-q.
template <typename Options>
void add_run_options(CLI::App& app, Options& o) {
  add_threads(app, o.threads);
  if constexpr (requires { o.device; }) add_device(app, o.device);
  add_verbosity(app, o.verbosity);
  add_progress(app, o.verbosity);
}

// Parses "1,3,2" (the value of `option`) into numbers; throws a usage error naming the option and the bad item.
std::vector<double> parse_numbers(const std::string& option, const std::string& text);
// Parses --weights.
inline std::vector<double> parse_weights(const std::string& text) { return parse_numbers("--weights", text); }

// Returns where a subcommand's result line goes: stdout, or stderr when the output itself goes to stdout (-o -).
std::FILE* report_stream(const std::string& output);
// Prints a note on stderr (progress, what was skipped); `level` 0 prints unless --quiet.
void note(const Verbosity& v, int level, const std::string& text);
// Reports input 1's values that are not tensors (a PyTorch checkpoint's epoch): kept, listed with -v, when the
// output is PyTorch written over input 1's pickle; otherwise left out, with a warning.
// Says at -v what happened to each role ("averaged: 4 weights, 8 optimizer moments; kept from input 1: 1 counter"),
// which roles a name decided, and which tensors were not averaged.
void report_roles(const Plan& plan, const Verbosity& v);
void note_kept_entries(const Verbosity& v, const Reader& input1, FormatId format);

// The subcommands, one file each, each set up the same way: it adds its options to `app` and returns what runs it.
using SetupFn = RunFn(CLI::App& app);
SetupFn setup_merge, setup_check, setup_inspect, setup_local_sgd, setup_allreduce, setup_convert, setup_diff,
    setup_completion, setup_soup, setup_align, setup_eval, setup_barrier;

}  // namespace wavg::cli
