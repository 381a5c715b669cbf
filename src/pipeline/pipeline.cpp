#include "pipeline/pipeline.hpp"

#include <filesystem>
#include <set>
#include <string_view>
#include <utility>

#include "wavg/backend.hpp"
#include "wavg/engine.hpp"
#include "wavg/error.hpp"
#include "wavg/method.hpp"
#include "wavg/plan.hpp"
#include "wavg/provenance.hpp"
#include "wavg/stdio_files.hpp"

namespace wavg::pipeline {

void check_output(const std::string& output, const std::vector<std::string>& inputs, Overwrite overwrite) {
  if (output == k_stdio_name) return check_stdout_is_not_terminal();
  check_output_not_input(output, inputs);
  std::error_code ec;
  if (overwrite == Overwrite::no && std::filesystem::exists(std::filesystem::symlink_status(output, ec)))
    throw Error(ExitCode::usage, output, "already exists (use --force to replace it)");
}

std::vector<std::unique_ptr<Reader>> open_inputs(const std::vector<std::string>& paths) {
  check_stdin_once(paths);
  std::vector<std::unique_ptr<Reader>> readers;
  readers.reserve(paths.size());
  for (const auto& p : paths) readers.push_back(open_reader(p));
  return readers;
}

std::vector<Reader*> raw(const std::vector<std::unique_ptr<Reader>>& readers) {
  std::vector<Reader*> out;
  for (const auto& r : readers) out.push_back(r.get());
  return out;
}

std::unique_ptr<Reader> open_if_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec) ? open_reader(path) : nullptr;
}

std::vector<std::string> files_of(const std::vector<Reader*>& readers) {
  std::vector<std::string> files;
  for (const Reader* r : readers)
    for (std::string& f : r->files()) files.push_back(std::move(f));
  return files;
}

Template choose_template(const std::string& format, const std::vector<Reader*>& inputs, const Plan& plan,
                         const std::vector<TensorInfo>& out) {
  Template t;
  t.index = template_input(format, inputs, out);
  t.input = inputs[t.index];
  if (t.index == 0) {
    t.dropped = plan.dropped_from_first;
    return t;
  }
  std::set<std::string_view> kept;
  for (const TensorInfo& o : out) kept.insert(o.name);
  for (const TensorInfo& i : t.input->tensors())
    if (!kept.count(i.name)) t.dropped.push_back(i.name);
  return t;
}

void pace_hashing(Engine& engine, const Provenance& provenance) {
  if (!provenance.empty())
    engine.on_progress([provenance](std::uint64_t done, std::uint64_t total) {
      provenance.note_read_progress(done, total);
    });
}

Output::Output(const std::string& path, const std::string& format, Overwrite overwrite, OutputSpec spec,
               const std::vector<std::string>& inputs)
    : m_spec(std::move(spec)) {
  // A format may commit under another name than the one given (a TensorFlow prefix: PREFIX.index). Standard
  // output ("-") gets the whole output in a temporary file first (output_format refuses folders there).
  const std::string target = output_file(format, path);
  if (path == k_stdio_name) m_stdout = std::make_unique<TempFile>("stdout", "", path);
  if (writes_folder(format))
    m_dir.emplace(target, overwrite, inputs);
  else if (m_stdout)
    m_file.emplace(m_stdout->path(), Overwrite::yes, inputs);
  else
    m_file.emplace(target, overwrite, inputs);
  m_writer = create_writer(format, m_dir ? m_dir->tmp_path() : m_file->tmp_path(), target, m_spec);
}

Output::~Output() = default;

void Output::commit() {
  m_writer.reset();
  if (m_dir)
    m_dir->commit();
  else
    m_file->commit();
  if (m_stdout) copy_to_stdout(m_stdout->path());
}

void merge_files(const MergeJob& job) {
  check_output(job.output, job.inputs, job.overwrite);
  const auto readers = open_inputs(job.inputs);
  const std::vector<Reader*> inputs = raw(readers);
  const Plan plan = build_plan(inputs, PlanOptions{});
  auto backend = make_cpu_backend();
  auto method = make_weighted_mean(*backend, job.weights);
  Engine engine(plan, inputs, *method, *backend);
  engine.verify();
  const std::string format = output_format(job.output, job.format, inputs);
  const std::vector<TensorInfo> tensors = output_tensors(plan);
  const Template t = choose_template(format, inputs, plan, tensors);
  Output out(job.output, format, job.overwrite,
             {tensors, t.input, t.dropped,
              make_provenance(job.command, method->describe(), job.inputs, "")},
             files_of(inputs));
  pace_hashing(engine, out.spec().provenance);
  engine.run(out.writer());
  out.commit();
}

}  // namespace wavg::pipeline
