#include "pipeline/pipeline.hpp"

#include <filesystem>
#include <utility>

#include "wavg/backend.hpp"
#include "wavg/engine.hpp"
#include "wavg/error.hpp"
#include "wavg/method.hpp"
#include "wavg/plan.hpp"
#include "wavg/provenance.hpp"

namespace wavg::pipeline {

void check_output(const std::string& output, const std::vector<std::string>& inputs, Overwrite overwrite) {
  check_output_not_input(output, inputs);
  std::error_code ec;
  if (overwrite == Overwrite::no && std::filesystem::exists(std::filesystem::symlink_status(output, ec)))
    throw Error(ExitCode::usage, output, "already exists (use --force to replace it)");
}

std::vector<std::unique_ptr<Reader>> open_inputs(const std::vector<std::string>& paths) {
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

Output::Output(const std::string& path, const std::string& format, Overwrite overwrite, OutputSpec spec,
               const std::vector<std::string>& inputs)
    : m_spec(std::move(spec)) {
  // A format may commit under another name than the one given (a TensorFlow prefix: PREFIX.index).
  const std::string target = output_file(format, path);
  if (writes_folder(format))
    m_dir.emplace(target, overwrite, inputs);
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
  Output out(job.output, output_format(job.output, job.format, inputs.front()), job.overwrite,
             {output_tensors(plan), inputs.front(), plan.dropped_from_first,
              make_provenance(job.command, method->describe(), job.inputs, "")},
             files_of(inputs));
  engine.run(out.writer());
  out.commit();
}

}  // namespace wavg::pipeline
