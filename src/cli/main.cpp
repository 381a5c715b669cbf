// wavg's entry point: the table of subcommands, and the one place that catches errors and maps them to the
// documented exit codes (0 success, 1 runtime error, 2 usage error, 3 incompatible inputs).

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <new>
#include <vector>

#include "cli/common.hpp"
#include "cli/help.hpp"
#include "cli/usage_errors.hpp"
#include "wavg/build_info.hpp"
#include "wavg/commit.hpp"
#include "wavg/error.hpp"
#include "wavg/format.hpp"
#include "wavg/stdio_files.hpp"
#include "wavg/version.hpp"

namespace {

struct Subcommand {
  const char* name;
  const char* summary;
  wavg::cli::SetupFn* setup;
  // Two or three command lines that run from the repository's root on the bundled samples, for the help's end.
  std::array<const char*, 3> examples;  // unused ones null
};

constexpr Subcommand k_subcommands[] = {
    {"merge",
     "Average checkpoints into one",
     wavg::cli::setup_merge,
     {"wavg merge samples/mlp/node1.h5 samples/mlp/node2.h5 samples/mlp/node3.h5 -o avg.h5",
      "wavg merge samples/mlp/node*.h5 -w 1200,300,500 -o weighted.h5",
      "wavg merge samples/mlp/node*.h5 --method median -o median.h5"}},
    {"check",
     "Check that checkpoints can be merged, without writing anything",
     wavg::cli::setup_check,
     {"wavg check samples/mlp/node1.h5 samples/mlp/node2.h5",
      "wavg check samples/mlp/node1.h5 samples/mlp/incompatible.h5"}},
    {"inspect",
     "List the tensors of a checkpoint",
     wavg::cli::setup_inspect,
     {"wavg inspect samples/mlp/node1.h5", "wavg inspect --json samples/keras3/einsum_a.keras"}},
    {"local-sgd",
     "Train replicas and average them every H steps (local SGD, FedAvg)",
     wavg::cli::setup_local_sgd,
     {"wavg local-sgd --data samples/digits/digits.csv.gz --workers 4 --rounds 20 --out-dir run",
      "wavg local-sgd --data samples/digits/digits.csv.gz --workers 10 --shard label-sorted --out-dir fed",
      "wavg local-sgd run fed --plot runs.svg"}},
    {"allreduce",
     "Under mpirun, average the checkpoint each rank holds",
     wavg::cli::setup_allreduce,
     {"mpirun -np 4 wavg allreduce 'worker-{rank}.h5' -o avg.h5",
      "mpirun --oversubscribe --allow-run-as-root -np 4 wavg allreduce 'worker-{rank}.h5' -o avg.h5",
      "mpirun -np 8 wavg allreduce 'worker-{rank}.h5' -o avg.h5 --stats traffic.json"}},
    {"convert",
     "Convert a checkpoint to another format or dtype",
     wavg::cli::setup_convert,
     {"wavg convert samples/mlp/node1.h5 -o node1.safetensors",
      "wavg convert samples/mlp/node1.h5 -o node1-f16.h5 --out-dtype float16",
      "wavg convert samples/mlp/node1.h5 -o client.h5 --set-meta num_examples=600 --set-meta round=3"}},
    {"diff",
     "Show how far one checkpoint is from another, tensor by tensor",
     wavg::cli::setup_diff,
     {"wavg diff samples/mlp/node1.h5 samples/mlp/node2.h5",
      "wavg diff samples/mlp/node1.h5 samples/mlp/node2.h5 --plot drift.svg",
      "wavg diff --exit-code --tolerance 1e-6 samples/mlp/node1.h5 samples/mlp/node2.h5 || echo drift"}},
    {"completion",
     "Print a shell completion script (bash, zsh or fish)",
     wavg::cli::setup_completion,
     {"source <(wavg completion bash)", "wavg completion zsh > ~/.zfunc/_wavg",
      "wavg completion fish | source"}},
    {"soup",
     "Greedy soup: average the inputs that raise an evaluation's score",
     wavg::cli::setup_soup,
     {"wavg soup ft-*.h5 --eval 'python eval.py --weights {model} --split val' -o soup.h5",
      "wavg soup run/round-00*.h5 --eval 'python eval.py --weights {model}' -o soup.h5 --plot soup.svg"}},
    {"align",
     "Permute a checkpoint's hidden units to match another's (weight matching)",
     wavg::cli::setup_align,
     {"wavg align r2/final.h5 --to r1/final.h5 -o r2-aligned.h5",
      "wavg merge r1/final.h5 r2/final.h5 --align weights -o aligned-avg.h5"}},
    {"eval",
     "Score a built-in MLP checkpoint on a CSV's test split",
     wavg::cli::setup_eval,
     {"wavg local-sgd --data samples/digits/digits.csv.gz --rounds 20 --out-dir run",
      "wavg eval run/final.h5 --data samples/digits/digits.csv.gz"}},
    {"barrier",
     "Score the straight line between two MLP checkpoints (loss barrier)",
     wavg::cli::setup_barrier,
     {"wavg barrier r1/final.h5 r2/final.h5 --data samples/digits/digits.csv.gz",
      "wavg barrier r1/final.h5 r2-aligned.h5 --data samples/digits/digits.csv.gz --plot barrier.svg"}},
};

constexpr const char* k_exit_codes =
    "Exit codes: 0 success, 1 runtime error, 2 usage error, 3 incompatible inputs.";

// A subcommand's help ends with its examples and its own manual page.
std::string footer(const Subcommand& s) {
  std::string text = "Examples:";
  for (const char* example : s.examples)
    if (example) text += std::string("\n  ") + example;
  return text + "\n\n" + k_exit_codes + "\nSee wavg-" + s.name + "(1).";
}

// `wavg --version`: the version, then the commit and what the build has, one `name: value` line each, so that
// scripts can grep a feature and a bug report says which code the binary is and which code paths it has (as ccache
// --version and ffmpeg -buildconf do).
std::string version_text() {
  std::string text = std::string("wavg ") + wavg::k_version + "\ncommit: " + wavg::k_commit;
  if (std::string(wavg::k_commit) == "unknown") text += " (not built from a git checkout)";
  for (const auto& [name, value] : wavg::build_features()) text += "\n" + name + ": " + value;
  std::string libraries;
  for (const auto& [name, version] : wavg::format_libraries())
    libraries += (libraries.empty() ? "" : ", ") + name + " " + version;
  return text + "\nlibraries: " + libraries + "\nCLI11: " + CLI11_VERSION;
}

// Every error line is printed here (or by note()), with what came from files escaped: one line, printable.
void print_problem(const wavg::Problem& p) {
  using wavg::printable;
  // An input read from standard input is named "-", as given, not by the path of its temporary copy.
  const std::string what = wavg::as_given(p.what), file = wavg::as_given(p.file);
  if (file.empty())
    std::fprintf(stderr, "wavg: error: %s\n", printable(what).c_str());
  else
    std::fprintf(stderr, "wavg: error: %s: %s\n", printable(file).c_str(), printable(what).c_str());
}

// Memory running out is one line and exit 1 wherever it happens. A bad_alloc unwinds through destructors that
// allocate (nlohmann::json's destructor reserves a vector for the values it frees), and an allocation failing in a
// destructor or a parallel region ends the process in std::terminate: "terminate called after throwing an instance
// of 'std::bad_alloc'" and an abort (inspect of a safetensors of 100,000 tensors under ulimit -v 80000). So the
// first failed allocation frees a reserve, for the unwinding, before it throws; and a terminate that a bad_alloc
// caused still says one line. The reserve is address space only: its pages are never touched.
constexpr std::size_t k_reserve = 32u << 20;
std::atomic<void*> g_reserve{nullptr};
const char* g_running = "wavg";  // the subcommand, for a terminate's line

void on_new_failure() {
  std::free(g_reserve.exchange(nullptr));
  std::set_new_handler(nullptr);  // later failures throw at once
  throw std::bad_alloc();
}

[[noreturn]] void on_terminate() {
  if (const std::exception_ptr e = std::current_exception()) try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "wavg: error: %s: out of memory\n", g_running);
      std::_Exit(static_cast<int>(wavg::ExitCode::runtime));
    } catch (...) {
    }
  std::abort();
}

void keep_reserve_for_out_of_memory() {
  g_reserve = std::malloc(k_reserve);
  if (g_reserve) std::set_new_handler(on_new_failure);
  std::set_terminate(on_terminate);
}

// A mismatch report shows this many lines without -v (its summaries lead), then says how many more there are.
constexpr std::size_t k_report_lines = 20;

// Prints an error's problems: every one with -v, else the first k_report_lines and a count of the rest.
void print_problems(const std::vector<wavg::Problem>& problems, bool verbose) {
  const std::size_t shown = verbose || problems.size() <= k_report_lines + 1 ? problems.size() : k_report_lines;
  for (std::size_t i = 0; i < shown; ++i) print_problem(problems[i]);
  if (shown < problems.size())
    std::fprintf(stderr, "wavg: error: ... and %zu more (-v lists every one)\n", problems.size() - shown);
}

// A usage error found after parsing (`--steps must be at least 2`) ends as CLI11's own do: with the subcommand's
// help to read. Problems about a file (an output that exists) already say what to do and keep their form.
std::vector<wavg::Problem> pointed_at_help(const wavg::Error& e, const CLI::App* sub) {
  std::vector<wavg::Problem> problems = e.problems();
  const std::string help = sub ? " (see wavg " + sub->get_name() + " --help)" : "";
  if (e.code() == wavg::ExitCode::usage && !help.empty() && !problems.empty() && problems.back().file.empty() &&
      problems.back().what.find("--help") == std::string::npos)
    problems.back().what += help;
  return problems;
}

// Tells whether the subcommand that ran was given -v.
bool verbose(const CLI::App* sub) {
  const CLI::Option* v = sub ? sub->get_option_no_throw("--verbose") : nullptr;
  return v && v->count() > 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The system time zone, named: glibc then reads /etc/localtime once, where with TZ unset every mktime() stats
  // it again, and libzip calls mktime() for each entry's date twice (two stats per tensor of a torch.save archive,
  // 13 % of the time opening 100,000 tensors took). ":/etc/localtime" is what an unset TZ means, for wavg and for
  // the programs it runs.
  ::setenv("TZ", ":/etc/localtime", 0);
  keep_reserve_for_out_of_memory();
  if (const int helper = wavg::run_codec_helper(argc, argv); helper >= 0) return helper;
  wavg::cli::use_passive_wait_policy(argv);
  CLI::App app{"wavg averages and merges neural-network checkpoints.", "wavg"};
  app.formatter(std::make_shared<wavg::cli::HelpFormatter>());
  app.set_version_flag("--version", version_text);
  app.require_subcommand(1);
  app.footer(std::string(k_exit_codes) + " See wavg(1).");

  std::vector<std::pair<CLI::App*, wavg::cli::RunFn>> runs;
  for (const Subcommand& s : k_subcommands) {
    CLI::App* sub = app.add_subcommand(s.name, s.summary);
    sub->footer(footer(s));
    runs.emplace_back(sub, s.setup(*sub));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "wavg: error: %s\n", wavg::printable(wavg::cli::usage_message(e, app)).c_str());
    return static_cast<int>(wavg::ExitCode::usage);
  }

  const CLI::App* ran = nullptr;
  try {
    for (auto& [sub, run] : runs) {
      if (!sub->parsed()) continue;
      ran = sub;
      g_running = sub->get_name().c_str();
      const CLI::Option* threads = sub->get_option_no_throw("--threads");
      wavg::cli::fit_threads_to_address_space(threads && threads->count() > 0 ? threads->as<int>() : 0, verbose(sub));
      return run();
    }
    return static_cast<int>(wavg::ExitCode::usage);
  } catch (const wavg::Error& e) {
    print_problems(pointed_at_help(e, ran), verbose(ran));
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {  // the readers name their file (open_reader); this is the job's own need
    print_problems({{ran ? ran->get_name() : "wavg", "out of memory"}}, false);
    return static_cast<int>(wavg::ExitCode::runtime);
  } catch (const std::filesystem::filesystem_error& e) {
    // "filesystem error: OPERATION: MESSAGE [PATH]" becomes PATH: OPERATION: MESSAGE, the one form of every error.
    std::string operation = e.what();
    const std::string lead = "filesystem error: ";
    if (operation.rfind(lead, 0) == 0) operation.erase(0, lead.size());
    operation = operation.substr(0, operation.find(": "));
    // libstdc++ names some failed calls by the function ("status", "symlink_status"), others in words.
    if (operation.find(' ') == std::string::npos) operation = "cannot look it up";
    print_problems({{wavg::as_given(e.path1().string()), operation + ": " + e.code().message()}}, false);
    return static_cast<int>(wavg::ExitCode::runtime);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wavg: error: %s\n", wavg::printable(e.what()).c_str());
    return static_cast<int>(wavg::ExitCode::runtime);
  }
}
