#pragma once
// The conductor, between the subcommands (src/cli, src/train) and the core. A subcommand validates its options into
// a Job (inputs, output Target, options) and hands it to run(), which conducts every writing subcommand the same
// way: open the inputs -> plan -> base -> server state -> backend -> method -> engine -> output -> commit. What a
// subcommand does differently (align its inputs first, a federated method over a base, a server state written beside
// the output) it says by overriding one of the Steps, each of which defaults to the plain weighted mean. The output
// Target is checked by check_target() before any input opens, so a bad output costs nothing; every writing subcommand
// takes every target (a file, a folder, `-o -`) through the same Output.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/distributed.hpp"
#include "wavg/atomic_directory.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/backend.hpp"
#include "wavg/engine.hpp"
#include "wavg/federated.hpp"
#include "wavg/format.hpp"
#include "wavg/method.hpp"
#include "wavg/plan.hpp"
#include "wavg/provenance.hpp"
#include "wavg/temp_file.hpp"

namespace wavg::pipeline {

// Where a job writes and how, as the command line gave it.
struct TargetOptions {
  std::string path{};    // "-": standard output; ending in '/' or naming a folder: a Hugging Face folder
  std::string format{};  // --format; empty: from the path (and input 1)
  Overwrite overwrite = Overwrite::no;
  bool tf_state = false;         // --tf-state
  std::uint64_t shard_size = 0;  // --shard-size
  std::string block_type{};      // --out-dtype's block type (q8_0), one of the output row's block_types
};

// A checked output: its options and its format, the latter settled once input 1 is open (settle()). Only its makers
// (check_target, own_target) and settle() fill it, so every Target has passed the checks; a default one is none.
class Target {
 public:
  Target() = default;
  const TargetOptions& options() const { return m_options; }
  const std::string& path() const { return m_options.path; }
  Overwrite overwrite() const { return m_options.overwrite; }
  FormatId format_id() const { return m_format; }

 private:
  Target(TargetOptions options, FormatId format) : m_options(std::move(options)), m_format(format) {}
  friend Target check_target(const TargetOptions& options, const std::vector<std::string>& protect);
  friend Target own_target(const std::string& path, FormatId format);
  friend void settle(Target& target, const std::vector<Reader*>& inputs);

  TargetOptions m_options;
  FormatId m_format = FormatId::none;
};

// Checks an output before any input opens (usage errors, exit 2): its format (an unknown --format, `-o -` without
// one or with one that writes several files), the options it takes (--tf-state, --shard-size), and then that it
// names none of `protect` (the command line's input paths) and replaces nothing without Overwrite::yes; `-o -` must
// not be a terminal.
Target check_target(const TargetOptions& options, const std::vector<std::string>& protect);
// Returns an output the program names itself in `format` (a run's checkpoint, a soup's candidate), replaced freely.
Target own_target(const std::string& path, FormatId format);
// Settles the format from the inputs (a .json output after a TF.js input 1 is TF.js; a name that says nothing takes
// the inputs' format), and makes the checks check_target() left until the format was known.
void settle(Target& target, const std::vector<Reader*>& inputs);

// Refuses (usage error, exit 2), before any input is opened: an output that names one of `inputs` (the command
// line's paths), and an existing output without Overwrite::yes; for `-o -` (standard output), a terminal there.
void check_output(const std::string& output, const std::vector<std::string>& inputs, Overwrite overwrite);

// Opens every input before any work starts; the first unreadable one is the error. "-" is standard input, at most
// once (stdio_files.hpp).
std::vector<std::unique_ptr<Reader>> open_inputs(const std::vector<std::string>& paths);
std::vector<Reader*> raw(const std::vector<std::unique_ptr<Reader>>& readers);
// Opens `path` when it exists (the server state an earlier round left), else returns null.
std::unique_ptr<Reader> open_if_exists(const std::string& path);
// Returns every file the readers consist of (Reader::files()): what no output may replace.
std::vector<std::string> files_of(const std::vector<Reader*>& readers);
// Returns each input's files (Reader::files()), what its provenance fingerprint covers.
InputFiles input_files(const std::vector<Reader*>& inputs);

// The input an output keeps the structure of, and that input's tensors the output leaves out (OutputSpec).
struct Template {
  Reader* input = nullptr;
  std::size_t index = 0;  // among the inputs
  std::vector<std::string> dropped;
};
// Chooses the template of an output of `format` with tensors `out` (template_input in format.hpp): the first
// input in that format whose tensors fit, else input 1.
Template choose_template(FormatId format, const std::vector<Reader*>& inputs, const Plan& plan,
                         const std::vector<TensorInfo>& out);

// Lets the provenance's hash threads follow `engine` through the inputs, so each byte is read from disk once.
void pace_hashing(Engine& engine, const Provenance& provenance);

// One output: its atomic file or folder, the spec with the provenance, and the writer of its format. Destroyed
// before commit(), it leaves nothing behind. The path "-" is standard output: the output is made in a private
// temporary file and copied there by commit().
class Output {
 public:
  // `target` comes from check_target() (settled); `inputs` lists every file the output may not replace (files_of).
  // The spec's --tf-state and --shard-size come from the target.
  Output(const Target& target, OutputSpec spec, const std::vector<std::string>& inputs);
  // An output the program names itself (a server state, a trained model), replaced freely.
  Output(const std::string& path, FormatId format, Overwrite overwrite, OutputSpec spec,
         const std::vector<std::string>& inputs);
  // Another rank's part of a distributed output (Codec::in_place) whose temporary file or folder rank 0's Output
  // made at `tmp_path`: a writer of its own there (OutputSpec::part) and no atomic file, since rank 0 commits or
  // removes it.
  Output(const Target& target, OutputSpec spec, const std::string& tmp_path);
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  Writer& writer() { return *m_writer; }
  const OutputSpec& spec() const { return m_spec; }
  // Closes the writer (which must have finished: Engine::run does it) and puts the output in place.
  void commit();
  // Returns where the output is written until commit(): its temporary file or folder.
  const std::string& tmp_path() const { return m_dir ? m_dir->tmp_path() : m_file->tmp_path(); }

 private:
  std::unique_ptr<TempFile> m_stdout;  // the whole output before it goes to standard output (path "-")
  // One of the two: a folder output (Codec::folder) is an AtomicDirectory, any other an AtomicFile.
  std::optional<AtomicFile> m_file;
  std::optional<AtomicDirectory> m_dir;
  OutputSpec m_spec;  // declared before the writer, which refers to it
  std::unique_ptr<Writer> m_writer;
};

// A validated job: everything run() needs, the options already checked against each other.
struct Job {
  std::vector<std::string> inputs{};  // paths as given ("-": standard input)
  Target output{};                    // from check_target()
  std::string command{};              // the subcommand, for the provenance
  PlanOptions plan{};
  std::optional<DType> out_dtype{};
  HashAlgo hash = HashAlgo::xxh3_128;
  std::vector<double> weights{};  // the plain mean's (empty: equal)
  // The base (the global model of a federated round, the task vectors' base), "" for none: run() opens it once the
  // plan is made, matches it against the plan and hands it to the engine; the output may not replace it.
  std::string base{};
  // The server optimizer's state ("" for none): run() loads it (when it exists) against the plan and `server`, and
  // writes the next one beside the output, committed after it; the output may not replace it.
  std::string state{};
  ServerStepParams server{};
  // Further models the job reads besides its inputs (align's --to), each one file as given: the provenance
  // fingerprints them after the inputs.
  std::vector<std::string> references{};
};

// What a run made, for the subcommand's report.
struct Run {
  std::vector<std::unique_ptr<Reader>> readers;  // the inputs as opened
  std::vector<Reader*> inputs;                   // what the plan and the engine saw (Steps::inputs)
  Plan plan;
  std::unique_ptr<Reader> base;          // Job::base, opened (null: none)
  std::vector<std::size_t> base_source;  // each plan entry's tensor in the base (match_base)
  std::unique_ptr<ServerState> state;    // Job::state, loaded (null: none)
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Method> method;
  Target output;  // the job's, its format settled from input 1
  Template templ;
  Division division;  // how the ranks shared the work (one rank: all of it)
};

// The steps of run() a subcommand may change; each default is the plain job's, the weighted mean of Job::weights.
// Called in this order. The base and the server state are the job's data, not steps: run() opens them itself.
class Steps {
 public:
  virtual ~Steps() = default;
  // Returns the readers the plan and the engine see (alignment permutes them); the output keeps the opened
  // inputs' own files as templates.
  virtual std::vector<Reader*> inputs(const std::vector<Reader*>& opened) { return opened; }
  // Returns the base (Job::base opened; null without one), which run() matches against the plan: a sliced merge's
  // is a virtual model of the base's slices.
  virtual std::unique_ptr<Reader> base(const Job& job);
  // Adjusts the plan (each tensor's action) before --out-dtype applies.
  virtual void plan(Plan& /*plan*/, const std::vector<Reader*>& /*inputs*/) {}
  virtual std::unique_ptr<Backend> backend(const Plan& /*plan*/, std::size_t /*inputs*/) { return make_cpu_backend(); }
  // Returns the method; `run` holds the plan, the inputs the engine sees, the base and the server state.
  virtual std::unique_ptr<Method> method(Backend& backend, const Run& run, const Job& job);
  // Follows the engine (a progress line) before it verifies the inputs.
  virtual void engine(Engine& /*engine*/) {}
  // Says which input the output (settled to `format`) keeps as its template.
  virtual void chose(const Template& /*templ*/, FormatId /*format*/) {}
  // Returns what the provenance records as the method.
  virtual std::string describe(const Method& method) { return method.describe(); }
  // Completes the output's spec (merge --recipe: the recipe in the provenance, the base's companion files).
  virtual void output(OutputSpec& /*spec*/, const Run& /*run*/) {}
  // Returns every further file the output may not replace (align's reference model).
  virtual std::vector<std::string> protect() { return {}; }
  // Runs after the output (and the server state) is committed (a progress line erased).
  virtual void committed() {}
};

// Returns `options` for a plan that the Engine runs: it reads a float tensor stored in several float dtypes.
PlanOptions engine_plan_options(PlanOptions options);
// Runs `job`: opens its inputs, plans, builds the backend and the method, verifies, writes the output and commits.
// Under mpirun or srun with K > 1 ranks (with_mpi), every rank runs it and does a share of the work
// (distributed.hpp); every error is agreed and reported once.
Run run(const Job& job, Steps& steps);
// Runs `job` up to its output (check): opens the inputs, plans, opens the base and the server state, builds the
// backend and the method and verifies; writes nothing, and `job.output` is not looked at.
Run verify(const Job& job, Steps& steps);
// Runs the plain job (the weighted mean of job.weights).
Run run(const Job& job);

}  // namespace wavg::pipeline
