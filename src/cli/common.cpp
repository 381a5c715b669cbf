#include "cli/common.hpp"
#include "cli/progress.hpp"

#include <omp.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "wavg/error.hpp"
#include "wavg/stdio_files.hpp"

namespace wavg::cli {

void add_verbosity(CLI::App& app, Verbosity& v) {
  app.add_flag("-v,--verbose", v.verbose, "Say more on stderr (repeat for more)");
  app.add_flag("-q,--quiet", v.quiet, "Print nothing but errors");
}

void add_plan_options(CLI::App& app, PlanOptions& options) {
  add_choice(app, "--int-policy", options.int_policy,
             {{"first", IntPolicy::first}, {"equal", IntPolicy::equal}, {"error", IntPolicy::error}},
             "Non-float tensors: copy input 1's, require identical values, or refuse");
  add_choice(app, "--tensors", options.tensors,
             {{"strict", TensorMatch::strict}, {"intersection", TensorMatch::intersection}},
             "A tensor missing from some inputs is an error (strict) or left out (intersection)");
  add_choice(app, "--match", options.match, {{"name", Pairing::name}, {"order", Pairing::order}},
             "Pair tensors across inputs by full name, or by position with shape and dtype checks");
  add_filters(app, options);
}

void add_format(CLI::App& app, std::string& format) {
  app.add_option("--format", format, "Output format (default: from the output's extension)")
      ->type_name(output_format_names());
}

void add_filters(CLI::App& app, PlanOptions& options) {
  // One pattern per occurrence, so that `--exclude '*step*' a.h5 b.h5` leaves the inputs alone.
  app.add_option("--include", options.include,
                 "Plan only tensors whose names match this shell-style pattern (repeatable; * also matches /)")
      ->type_name("GLOB")
      ->allow_extra_args(false);
  app.add_option("--exclude", options.exclude, "Leave out tensors whose names match this pattern (repeatable)")
      ->type_name("GLOB")
      ->allow_extra_args(false);
}

void report_excluded(const Plan& plan, const Verbosity& v) {
  if (plan.excluded.empty()) return;
  note(v, 1, "left out " + std::to_string(plan.excluded.size()) + " tensor(s) by --include / --exclude");
  for (const auto& name : plan.excluded) note(v, 1, "left out: " + name);
}

void add_hash(CLI::App& app, HashAlgo& hash) {
  add_choice(app, "--hash", hash,
             {{"xxh3", HashAlgo::xxh3_128}, {"sha256", HashAlgo::sha256}, {"none", HashAlgo::none}},
             "Fingerprint each input in the provenance with XXH3-128 (fast), SHA-256 (cryptographic, about 0.6 "
             "CPU-seconds per GB) or not at all");
  app.add_flag_callback("--no-hash", [&hash] { hash = HashAlgo::none; }, "Same as --hash none");
}

CLI::Option* add_reduction_options(CLI::App& app, train::Reduction& reduction, std::string& stats) {
  CLI::Option* algorithm = add_choice(app, "--algorithm", reduction,
             {{"reduce-scatter", train::Reduction::reduce_scatter}, {"gather", train::Reduction::gather}},
             "How MPI ranks average: reduce-scatter + allgather (each rank moves 2(K-1)/K of the model) or "
             "allgather of everything ((K-1) times); the bytes written are the same");
  app.add_option("--stats", stats, "Write each rank's bytes sent and received, messages and seconds to this JSON");
  return algorithm;
}

void add_threads(CLI::App& app, int& threads) {
  app.add_option("-j,--threads", threads, "Worker threads (default: OMP_NUM_THREADS or all cores)")
      ->check(CLI::Range(1, 4096).description(""))
      ->type_name("N");
}

void apply_threads(int threads) {
  if (threads > 0) omp_set_num_threads(threads);
}

void add_out_dtype(CLI::App& app, std::string& out_dtype) {
  app.add_option("--out-dtype", out_dtype,
                 "Store floating-point tensors as this type, rounded once to nearest (default: as in input 1)")
      ->check(CLI::IsMember({"float16", "bfloat16", "float32", "float64"}));
}

void add_tf_state(CLI::App& app, bool& tf_state) {
  app.add_flag("--tf-state", tf_state,
               "With a TensorFlow output: also write the 'checkpoint' state file beside it, naming it, so "
               "tf.train.latest_checkpoint finds it (an existing one is replaced only with --force)");
}

void check_tf_state(bool tf_state, const std::string& format) {
  if (tf_state && format != "tensorflow") fail_usage("--tf-state needs a TensorFlow output (--format tensorflow)");
}

void add_device(CLI::App& app, std::string& device) {
  app.add_option("--device", device, "Where the arithmetic runs: the GPU when it pays (auto), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->default_str("auto");
}

std::unique_ptr<Backend> make_backend(const std::string& device, std::uint64_t job_bytes, const Verbosity& v) {
  if (device == "cpu") {
    note(v, 1, "device: cpu (--device cpu)");
    return make_cpu_backend();
  }
  const CudaProbe probe = probe_cuda();
  if (device == "cuda" || (probe.usable && job_bytes >= k_auto_cuda_bytes)) {
    auto backend = make_cuda_backend();  // throws, naming the reason, when the probe said no
    note(v, 1, "device: cuda (" + probe.detail + ")");
    return backend;
  }
  note(v, 1, "device: cpu (" +
                 (probe.usable ? "the job reads " + std::to_string(job_bytes >> 20) + " MiB, less than the " +
                                     std::to_string(k_auto_cuda_bytes >> 20) + " MiB worth moving to the GPU"
                               : probe.detail) +
                 ")");
  if (!probe.cause.empty()) note(v, 2, "device: " + probe.cause);
  return make_cpu_backend();
}

std::vector<double> parse_weights(const std::string& text) {
  std::vector<double> out;
  if (text.empty()) return out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || errno == ERANGE)
      fail_usage("--weights: '" + item + "' is not a number");
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::FILE* report_stream(const std::string& output) { return output == k_stdio_name ? stderr : stdout; }

void note(const Verbosity& v, int level, const std::string& text) {
  if (v.quiet || v.verbose < level) return;
  ProgressLine::erase_current();
  std::fprintf(stderr, "wavg: %s\n", printable(as_given(text)).c_str());
}

InputFiles input_files(const std::vector<Reader*>& inputs) {
  InputFiles out;
  for (const Reader* r : inputs) out.push_back(r->files());
  return out;
}

void note_kept_entries(const Verbosity& v, const Reader& input1, const std::string& format) {
  const std::vector<std::string> kept = input1.kept_entries();
  if (kept.empty()) return;
  const bool keeps = format == "pytorch" && input1.format_name() == "PyTorch";
  if (!keeps)
    note(v, 0, "warning: " + std::to_string(kept.size()) + " value(s) of " + input1.path() +
                   " that are not tensors have no place in a " + format + " output and are left out (-v lists them)");
  for (const std::string& k : kept) note(v, 1, (keeps ? "kept from input 1: " : "left out: ") + k);
}

}  // namespace wavg::cli
