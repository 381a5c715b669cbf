#pragma once
// The merge pipeline, between the subcommands (src/cli, src/train) and the core: check the output's path, open the
// inputs, write through one atomic output that carries the provenance, commit. A subcommand binds and validates its
// options and calls these; the plan, method and engine in between are its own (merge.cpp: federated methods, a
// base, a server state), or merge_files() runs the plain job whole.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "wavg/atomic_directory.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/engine.hpp"
#include "wavg/format.hpp"
#include "wavg/plan.hpp"
#include "wavg/provenance.hpp"
#include "wavg/temp_file.hpp"

namespace wavg::pipeline {

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

// The input an output keeps the structure of, and that input's tensors the output leaves out (OutputSpec).
struct Template {
  Reader* input = nullptr;
  std::size_t index = 0;  // among the inputs
  std::vector<std::string> dropped;
};
// Chooses the template of an output of `format` with tensors `out` (template_input in format.hpp): the first
// input in that format whose tensors fit, else input 1.
Template choose_template(const std::string& format, const std::vector<Reader*>& inputs, const Plan& plan,
                         const std::vector<TensorInfo>& out);

// Lets the provenance's hash threads follow `engine` through the inputs, so each byte is read from disk once.
void pace_hashing(Engine& engine, const Provenance& provenance);

// One output: its atomic file, the spec with the provenance, and the writer of its format. Destroyed before
// commit(), it leaves nothing behind. The path "-" is standard output: the output is made in a private temporary
// file and copied there by commit().
class Output {
 public:
  // `format` is output_format()'s name; `inputs` lists every file the output may not replace (files_of).
  Output(const std::string& path, const std::string& format, Overwrite overwrite, OutputSpec spec,
         const std::vector<std::string>& inputs);
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  Writer& writer() { return *m_writer; }
  const OutputSpec& spec() const { return m_spec; }
  // Closes the writer (which must have finished: Engine::run does it) and puts the output in place.
  void commit();

 private:
  std::unique_ptr<TempFile> m_stdout;  // the whole output before it goes to standard output (path "-")
  // One of the two: a folder output (writes_folder) is an AtomicDirectory, any other an AtomicFile.
  std::optional<AtomicFile> m_file;
  std::optional<AtomicDirectory> m_dir;
  OutputSpec m_spec;  // declared before the writer, which refers to it
  std::unique_ptr<Writer> m_writer;
};

// The plain job: the inputs' weighted mean (equal weights when `weights` is empty) into `output`.
struct MergeJob {
  std::vector<std::string> inputs;
  std::string output;
  std::string format;  // empty: from the output's extension (and input 1)
  Overwrite overwrite = Overwrite::no;
  std::string command;  // the subcommand, for the provenance
  std::vector<double> weights;
};
void merge_files(const MergeJob& job);

}  // namespace wavg::pipeline
