#include "cli/common.hpp"
#include "cli/progress.hpp"

#include <omp.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "train/reduction.hpp"
#include "wavg/error.hpp"
#include "wavg/format_facts.hpp"
#include "wavg/free_cores.hpp"
#include "wavg/stdio_files.hpp"

namespace wavg::cli {

void add_verbosity(CLI::App& app, Verbosity& v) {
  app.add_flag("-v,--verbose", v.verbose, "Say more on stderr (repeat for more)");
  app.add_flag("-q,--quiet", v.quiet, "Print nothing but errors");
}

void add_progress(CLI::App& app, Verbosity& v) {
  add_choice(app, "--progress", v.progress,
             {{"auto", ProgressStyle::automatic}, {"json", ProgressStyle::json}, {"none", ProgressStyle::none}},
             "auto: a line redrawn when stderr is a terminal; json: one JSON line per step on stderr");
}

void add_plan_options(CLI::App& app, PlanOptions& options) {
  add_choice(app, "--int-policy", options.int_policy, k_int_policy_names,
             "Hyper-parameters, counters and non-float tensors: copy input 1's (a sequence's newest), require "
             "identical values, or refuse");
  add_choice(app, "--optimizer-state", options.optimizer_state, k_optimizer_state_names,
             "Optimizer moments and slots: combine them like the weights, copy input 1's, or leave them out");
  add_choice(app, "--tensors", options.tensors, k_tensor_match_names,
             "A tensor missing from some inputs is an error (strict) or left out (intersection)");
  add_choice(app, "--match", options.match, k_pairing_names,
             "Pair tensors across inputs by full name, or by position with shape and dtype checks");
  add_filters(app, options);
}

void add_output(CLI::App& app, std::string& output, std::string& format, bool& force, const std::string& output_help,
                const std::string& force_help) {
  app.add_option("-o,--output", output, output_help)->required();
  app.add_option("--format", format, "Output format (default: from the output's extension)")
      ->type_name(output_format_names());
  app.add_flag("-f,--force", force, force_help);
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

void report_roles(const Plan& plan, const Verbosity& v) {
  if (v.quiet || v.verbose < 1) return;
  // Per role and per what happened: "averaged: 4 weights, 8 optimizer moments; kept from input 1: 1 counter".
  constexpr std::size_t roles = std::size(k_role_names);  // every Role, LoRA's included
  std::map<std::string, std::array<std::size_t, roles>> tally;
  std::vector<std::string> order;
  for (const PlanEntry& e : plan.entries) {
    const std::string what = e.action == Action::average       ? "averaged"
                             : e.action == Action::check_equal ? "identical in every input"
                                                               : "kept from input " + std::to_string(e.copy_from + 1);
    if (!tally.contains(what)) order.insert(what == "averaged" ? order.begin() : order.end(), what);
    ++tally[what][static_cast<std::size_t>(e.info.role)];
  }
  std::string line;
  for (const std::string& what : order) {
    std::string parts;
    for (std::size_t r = 0; r < roles; ++r)
      if (const std::size_t n = tally[what][r])
        parts += (parts.empty() ? "" : ", ") + role_phrase(static_cast<Role>(r), n);
    line += (line.empty() ? "" : "; ") + what + ": " + parts;
  }
  if (!plan.optimizer_dropped.empty())
    line += "; left out (--optimizer-state drop): " + role_phrase(Role::optimizer_state, plan.optimizer_dropped.size());
  note(v, 1, line);
  for (const PlanEntry& e : plan.entries) {
    const std::string role(name_of(k_role_names, e.info.role));
    if (e.role_by_name) note(v, 1, "role by name (the file does not say): " + e.info.name + " (" + role + ")");
    if (e.action != Action::average)
      note(v, 1,
           "not averaged: " + e.info.name + " (" + std::string(dtype_name(e.info.dtype)) + " " + role + ", " +
               (e.action == Action::check_equal ? "identical in every input"
                                                : "copied from input " + std::to_string(e.copy_from + 1)) +
               ")");
  }
  for (const std::string& n : plan.notes) note(v, 1, n);
}

void report_excluded(const Plan& plan, const Verbosity& v) {
  if (plan.excluded.empty()) return;
  note(v, 1, "left out " + std::to_string(plan.excluded.size()) + " tensor(s) by --include / --exclude");
  for (const auto& name : plan.excluded) note(v, 1, "left out: " + name);
}

void add_hash(CLI::App& app, HashAlgo& hash) {
  // The provenance records xxh3 as "xxh3_128" (hash_algo_name): the file format's spelling, not the option's.
  static constexpr std::array<Named<HashAlgo>, 3> k_hash_names{
      {{"xxh3", HashAlgo::xxh3_128}, {"sha256", HashAlgo::sha256}, {"none", HashAlgo::none}}};
  add_choice(app, "--hash", hash, k_hash_names,
             "Fingerprint each input in the provenance with XXH3-128 (fast), SHA-256 (cryptographic, about 0.6 "
             "CPU-seconds per GB) or not at all");
  app.add_flag_callback(
      "--no-hash", [&hash] { hash = HashAlgo::none; }, "Same as --hash none");
}

CLI::Option* add_reduction_options(CLI::App& app, train::Reduction& reduction, std::string& stats) {
  CLI::Option* algorithm =
      add_choice(app, "--algorithm", reduction, train::k_reduction_names,
                 "How MPI ranks average: reduce-scatter + allgather (each rank moves 2(K-1)/K of the model) or "
                 "allgather of everything ((K-1) times); the bytes written are the same");
  app.add_option("--stats", stats, "Write each rank's bytes sent and received, messages and seconds to this JSON");
  return algorithm;
}

void add_threads(CLI::App& app, int& threads) {
  app.add_option("-j,--threads", threads, "Worker threads (default: OMP_NUM_THREADS or the cores free)")
      ->check(CLI::Range(1, 4096).description(""))
      ->type_name("N");
}

void apply_threads(int threads) {
  if (threads > 0)
    omp_set_num_threads(threads);
  else if (!std::getenv("OMP_NUM_THREADS"))
    omp_set_num_threads(free_cores_now());
}

void add_out_dtype(CLI::App& app, std::optional<DType>& out_dtype, std::string* block_type) {
  std::vector<Named<DType>> names;  // the float rows of DType's own table (dtype.cpp), short names as aliases
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64})
    names.insert(names.end(), {{dtype_name(t), t}, {dtype_short_name(t), t, true}});
  // The spellings of the frameworks' command lines and dtypes (torch.half, torch.float, torch.double, "fp16").
  names.insert(names.end(), {{"half", DType::f16, true},
                             {"fp16", DType::f16, true},
                             {"float", DType::f32, true},
                             {"fp32", DType::f32, true},
                             {"double", DType::f64, true},
                             {"fp64", DType::f64, true}});
  // The rows' block types, computed in float32 and encoded by the writer (the rows' own strings: the table keeps
  // views of its names).
  std::vector<std::string_view> blocks;
  if (block_type)
    for (const Codec& c : codecs())
      for (const char* b : c.block_types)
        if (b && std::find(blocks.begin(), blocks.end(), b) == blocks.end()) blocks.emplace_back(b);
  for (const std::string_view b : blocks) names.push_back({b, DType::f32});
  CLI::Option* option = add_choice(
      app, "--out-dtype", out_dtype, names,
      "Store floating-point tensors as this type, rounded once to nearest (default: as in input 1)" +
          std::string(blocks.empty() ? "" : "; q8_0 and q4_0 (GGUF outputs): quantized from float32 values"));
  if (block_type)
    option->each([block_type, blocks](const std::string& text) {
      *block_type = std::find(blocks.begin(), blocks.end(), text) == blocks.end() ? "" : text;
    });
}

std::string out_dtype_name(const std::optional<DType>& out_dtype) {
  return out_dtype ? std::string(dtype_name(*out_dtype)) : "";
}

void add_tf_state(CLI::App& app, bool& tf_state) {
  app.add_flag("--tf-state", tf_state,
               "With a TensorFlow output: also write the 'checkpoint' state file beside it, naming it, so "
               "tf.train.latest_checkpoint finds it (an existing one is replaced only with --force)");
}

namespace {

std::uint64_t parse_shard_size(const std::string& text) {
  static const std::pair<const char*, std::uint64_t> k_units[] = {{"KiB", 1ull << 10},
                                                                  {"MiB", 1ull << 20},
                                                                  {"GiB", 1ull << 30},
                                                                  {"KB", 1000ull},
                                                                  {"MB", 1000'000ull},
                                                                  {"GB", 1000'000'000ull},
                                                                  {"B", 1}};
  std::uint64_t unit = 1;
  std::string digits = text;
  for (const auto& [suffix, factor] : k_units) {
    const std::string s = suffix;
    if (digits.size() > s.size() && digits.compare(digits.size() - s.size(), s.size(), s) == 0) {
      digits.resize(digits.size() - s.size());
      unit = factor;
      break;
    }
  }
  std::uint64_t n = 0;
  bool ok = !digits.empty() && digits.size() <= 12;
  for (char c : digits) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (!ok || n == 0 || n > UINT64_MAX / unit)
    fail_usage("--shard-size " + text + ": give a positive size such as 5GB, 500MB or 2GiB");
  return n * unit;
}

}  // namespace

void add_shard_size(CLI::App& app, std::uint64_t& bytes) {
  app.add_option_function<std::string>(
         "--shard-size", [&bytes](const std::string& text) { bytes = parse_shard_size(text); },
         "With a folder output: the largest shard (default 5GB; KB/MB/GB or KiB/MiB/GiB)")
      ->type_name("SIZE");
}

void add_device(CLI::App& app, Device& device) {
  add_choice(app, "--device", device, k_device_names,
             "Where the arithmetic runs: cpu, cuda, or auto, which is the CPU (faster end to end wherever "
             "measured; -v says why)");
}

std::unique_ptr<Backend> make_backend(Device device, const Verbosity& v) {
  if (device == Device::cuda) {
    auto backend = make_cuda_backend();  // throws, naming the reason, when the probe says no
    note(v, 1, "device: cuda (" + probe_cuda().detail + ")");
    return backend;
  }
  if (device == Device::cpu) {
    note(v, 1, "device: cpu (--device cpu)");
  } else if (v.verbose >= 1) {  // probing starts the CUDA driver: only to say why
    const CudaProbe probe = probe_cuda();
    note(v, 1,
         "device: cpu (" +
             (probe.usable ? "--device auto keeps the CPU, which was faster end to end wherever measured; "
                             "--device cuda uses " +
                                 probe.detail
                           : probe.detail) +
             ")");
    if (!probe.cause.empty()) note(v, 2, "device: " + probe.cause);
  }
  return make_cpu_backend();
}

std::vector<double> parse_numbers(const std::string& option, const std::string& text) {
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
      fail_usage(option + ": '" + item + "' is not a number");
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::FILE* report_stream(const std::string& output) { return output == k_stdio_name ? stderr : stdout; }

Verbosity quiet_rank(Verbosity v) {
  v.quiet = true;
  v.verbose = 0;
  v.progress = ProgressStyle::none;
  return v;
}

void report_division(const pipeline::Division& division, const Verbosity& v) {
  if (division.ranks < 2) return;
  const double even = static_cast<double>(division.total) / division.ranks;
  for (int r = 0; r < division.ranks; ++r) {
    const std::uint64_t bytes = division.bytes[static_cast<std::size_t>(r)];
    char share[96];
    std::snprintf(share, sizeof share, "%llu bytes read and written, %.1f%% of an even share",
                  static_cast<unsigned long long>(bytes), even > 0 ? 100.0 * static_cast<double>(bytes) / even : 100.0);
    note(v, 1, "rank " + std::to_string(r) + " of " + std::to_string(division.ranks) + ": " + share);
  }
}

void note(const Verbosity& v, int level, const std::string& text) {
  if (v.quiet || v.verbose < level) return;
  ProgressLine::erase_current();
  std::fprintf(stderr, "wavg: %s\n", printable(as_given(text)).c_str());
}

void note_kept_entries(const Verbosity& v, const Reader& input1, FormatId format) {
  const std::vector<std::string> kept = input1.kept_entries();
  if (kept.empty()) return;
  const bool keeps = codec(format).keeps_entries && input1.format() == format;
  if (!keeps)
    note(v, 0,
         "warning: " + std::to_string(kept.size()) + " value(s) of " + input1.path() +
             " that are not tensors have no place in " + a_format(format) +
             " output and are left out (-v lists them)");
  for (const std::string& k : kept) note(v, 1, (keeps ? "kept from input 1: " : "left out: ") + k);
}

}  // namespace wavg::cli
