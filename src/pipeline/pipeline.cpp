#include "pipeline/pipeline.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <string_view>
#include <utility>

#include "pipeline/ranks.hpp"
#include "wavg/backend.hpp"
#include "wavg/engine.hpp"
#include "wavg/error.hpp"
#include "wavg/format_facts.hpp"
#include "wavg/free_space.hpp"
#include "wavg/method.hpp"
#include "wavg/plan.hpp"
#include "wavg/provenance.hpp"
#include "wavg/stdio_files.hpp"

namespace wavg::pipeline {

namespace {

// Refuses the options an output of `format` does not take.
void check_options(const Target& t) {
  const Codec& c = codec(t.format_id());
  if (t.options().tf_state && !c.accepts_option(OutputOption::tf_state))
    fail_usage("--tf-state needs a TensorFlow output (--format tensorflow)");
  if (t.options().shard_size && !c.accepts_option(OutputOption::shard_size))
    fail_usage("--shard-size needs a folder output (a path ending in '/')");
  const std::string& block = t.options().block_type;
  if (!block.empty() && std::none_of(c.block_types.begin(), c.block_types.end(),
                                     [&](const char* b) { return b && block == b; })) {
    std::string formats;
    for (const Codec& other : codecs())
      for (const char* b : other.block_types)
        if (b && block == b) formats += (formats.empty() ? "" : ", ") + std::string(other.name);
    fail_usage("--out-dtype " + block + " is a block type of " + formats + " outputs, and the output is " + c.name +
               "; give float16, bfloat16, float32 or float64");
  }
}

// Refuses an existing folder that holds no checkpoint of any folder format: no output replaces it, --force or not
// (the writers refuse it too), so saying "use --force" first would send the user round in a circle. An output
// naming an existing folder is a folder output (output_format) unless --format names a file format (`format`;
// none: not known yet).
void check_folder_target(const std::string& path, FormatId format) {
  if (format != FormatId::none && !codec(format).folder) return;
  std::string folder = path;
  while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
  std::error_code ec;
  if (!std::filesystem::is_directory(std::filesystem::symlink_status(folder, ec)) ||
      std::filesystem::is_empty(folder, ec))
    return;
  const SniffInput input(folder);
  for (const Codec& c : codecs())
    if (c.folder_holds && c.sniff && c.sniff(input)) return;
  throw Error(ExitCode::usage, folder,
              "is " + folder_without() +
                  ", and wavg replaces only a checkpoint's folder, even with --force: give a new or empty folder");
}

}  // namespace

Target check_target(const TargetOptions& options, const std::vector<std::string>& protect) {
  // An output whose name says nothing (ckpt-5) or is .ckpt takes its format from the inputs: settle() decides it
  // and checks what depends on it; the name itself is checked now.
  if (format_from_inputs(options.path, options.format)) {
    check_folder_target(options.path, FormatId::none);
    check_output(options.path, protect, options.overwrite);
    return Target{options, FormatId::none};
  }
  Target t{options, output_format(options.path, options.format)};
  check_options(t);
  check_folder_target(t.path(), t.format_id());
  check_output(output_file(t.format_id(), t.path()), protect, t.overwrite());
  return t;
}

Target own_target(const std::string& path, FormatId format) {
  return Target{{path, std::string(codec(format).name), Overwrite::yes}, format};
}

void settle(Target& target, const std::vector<Reader*>& inputs) {
  const bool deferred = target.m_format == FormatId::none;
  target.m_format = output_format(target.path(), target.m_options.format, inputs);
  if (!deferred) return;
  check_options(target);
  const std::string file = output_file(target.m_format, target.path());
  if (file != target.path()) check_output(file, files_of(inputs), target.overwrite());
}

void check_output(const std::string& output, const std::vector<std::string>& inputs, Overwrite overwrite) {
  if (output == k_stdio_name) return check_stdout_is_not_terminal();
  check_output_not_input(output, inputs);
  std::error_code ec;
  // The output is made beside its target, so the target's folder must exist: said as such, not as a temporary
  // file that cannot be created.
  std::string target = output;
  while (target.size() > 1 && target.back() == '/') target.pop_back();
  const std::filesystem::path folder = std::filesystem::path(target).parent_path();
  if (!folder.empty() && !std::filesystem::is_directory(folder, ec)) {
    const bool exists = std::filesystem::exists(folder, ec);
    fail(output, exists ? "the output's folder " + folder.string() + " is not a folder"
                        : "the output's folder " + folder.string() + " does not exist (create it first: mkdir -p " +
                              folder.string() + ")");
  }
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

InputFiles input_files(const std::vector<Reader*>& inputs) {
  InputFiles out;
  for (const Reader* r : inputs) out.push_back(r->files());
  return out;
}

Template choose_template(FormatId format, const std::vector<Reader*>& inputs, const Plan& plan,
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
    engine.on_progress(
        [provenance](std::uint64_t done, std::uint64_t total) { provenance.note_read_progress(done, total); });
}

namespace {

// Returns `spec` with the options of `target` that a writer takes from the spec.
OutputSpec with_options(const Target& target, OutputSpec spec) {
  spec.write_tf_state = target.options().tf_state;
  spec.shard_size = target.options().shard_size;
  spec.block_type = target.options().block_type;
  return spec;
}

}  // namespace

Output::Output(const Target& target, OutputSpec spec, const std::vector<std::string>& inputs)
    : Output(target.path(), target.format_id(), target.overwrite(), with_options(target, std::move(spec)), inputs) {}

Output::Output(const std::string& path, FormatId format, Overwrite overwrite, OutputSpec spec,
               const std::vector<std::string>& inputs)
    : m_spec(std::move(spec)) {
  // A format may commit under another name than the one given (a TensorFlow prefix: PREFIX.index). Standard
  // output ("-") gets the whole output in a temporary file first (output_format refuses folders there).
  const std::string target = output_file(format, path);
  if (path == k_stdio_name) m_stdout = std::make_unique<TempFile>("stdout", "", path);
  if (codec(format).folder)
    m_dir.emplace(target, overwrite, inputs);
  else if (m_stdout)
    m_file.emplace(m_stdout->path(), Overwrite::yes, inputs);
  else
    m_file.emplace(target, overwrite, inputs);
  m_writer = create_writer(format, m_dir ? m_dir->tmp_path() : m_file->tmp_path(), target, m_spec);
}

Output::Output(const Target& target, OutputSpec spec, const std::string& tmp_path)
    : m_spec(with_options(target, std::move(spec))) {
  WAVG_ASSERT(codec(target.format_id()).in_place);
  m_spec.part = true;
  m_writer = create_writer(target.format_id(), tmp_path, output_file(target.format_id(), target.path()), m_spec);
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

std::unique_ptr<Method> Steps::method(Backend& backend, const Run&, const Job& job) {
  return make_weighted_mean(backend, job.weights);
}

std::unique_ptr<Reader> Steps::base(const Job& job) {
  return job.base.empty() ? nullptr : open_reader(job.base);
}

PlanOptions engine_plan_options(PlanOptions options) {
  options.float_dtypes = FloatDTypes::mixed;
  return options;
}

namespace {

// The base phase: the base opened (Steps::base) and matched against the plan (Error(incompatible) naming what
// differs).
void open_base(const Job& job, Steps& steps, Run& r) {
  r.base = steps.base(job);
  if (r.base) r.base_source = match_base(r.plan, *r.base);
}

// The state phase: the server state an earlier round left (if any) loaded and checked against the plan.
void open_state(const Job& job, Run& r) {
  if (!job.state.empty())
    r.state = std::make_unique<ServerState>(job.state, open_if_exists(job.state), r.plan, job.server);
}

// The phases before any output: the inputs opened, the plan, the base, the server state, the backend and the
// method; returns the inputs as opened (the output's templates).
std::vector<Reader*> prepare(const Job& job, Steps& steps, Run& r) {
  std::vector<Reader*> opened;
  agreed([&] {
    if (mpi_size() > 1 && !job.state.empty())
      fail_usage("--state writes a second output: a merge with a server state runs on one process");
    r.readers = open_inputs(job.inputs);
    opened = raw(r.readers);
    r.inputs = steps.inputs(opened);
    r.plan = build_plan(r.inputs, engine_plan_options(job.plan));
    steps.plan(r.plan, r.inputs);
    if (job.out_dtype) set_out_dtype(r.plan, *job.out_dtype);
    open_base(job, steps, r);
    open_state(job, r);
    r.backend = steps.backend(r.plan, r.inputs.size());
    r.method = steps.method(*r.backend, r, job);
  });
  return opened;
}

// Hands the engine the base and lets the subcommand follow it.
void start(Engine& engine, const Run& r, Steps& steps) {
  if (r.base) engine.set_base(r.base.get(), r.base_source);
  steps.engine(engine);
}

}  // namespace

Run verify(const Job& job, Steps& steps) {
  Run r;
  prepare(job, steps, r);
  Engine engine(r.plan, r.inputs, *r.method, *r.backend);
  start(engine, r, steps);
  agreed([&] { engine.verify(); });
  return r;
}

Run run(const Job& job, Steps& steps) {
  Run r;
  const int ranks = mpi_size(), rank = mpi_rank();
  const bool shared = ranks > 1;  // a distributed merge (distributed.hpp); agreed() is a plain call otherwise
  const std::vector<Reader*> opened = prepare(job, steps, r);
  Engine engine(r.plan, r.inputs, *r.method, *r.backend);
  start(engine, r, steps);
  // An average reads every input and the base: the bytes the shares balance.
  if (shared) r.division = divide(r.plan, r.inputs.size() + (r.base ? 1 : 0), engine);

  // The output is settled before the inputs are read (the read pass of engine.verify()): its format, its template,
  // what its writer cannot store (GGUF's K-quants) and the disk it needs, each a refusal that should not wait for
  // a pass over every input.
  const std::vector<TensorInfo> tensors = output_tensors(r.plan);
  agreed([&] {
    r.output = job.output;
    settle(r.output, opened);
    if (shared) check_distributed_output(r.output.format_id(), r.output.path());
    r.templ = choose_template(r.output.format_id(), opened, r.plan, tensors);
    steps.chose(r.templ, r.output.format_id());
    OutputSpec sized;
    sized.tensors = tensors;
    sized.template_input = r.templ.input;
    sized.out_dtype_given = job.out_dtype.has_value();
    sized.block_type = r.output.options().block_type;
    const std::uint64_t bytes =
        output_bytes(r.output.format_id(), sized, output_file(r.output.format_id(), r.output.path()));
    if (rank == 0) check_free_space(job.output.path(), bytes);
  });
  agreed([&] { engine.verify(); });

  const std::vector<std::string> base = r.base ? r.base->files() : std::vector<std::string>{};
  std::vector<std::string> protect;
  std::optional<OutputSpec> spec;
  agreed([&] {
    protect = files_of(opened);
    protect.insert(protect.end(), base.begin(), base.end());
    if (!job.state.empty()) protect.push_back(job.state);
    for (std::string& p : steps.protect()) protect.push_back(std::move(p));
    // Each rank fingerprints its part of the inputs (HashShare), joined before the header is written.
    InputFiles fingerprinted = input_files(opened);
    for (const std::string& path : job.references) fingerprinted.push_back({path});
    spec.emplace(OutputSpec{
        tensors, r.templ.input, r.templ.dropped,
        make_provenance(job.command, steps.describe(*r.method), fingerprinted,
                        !job.output.options().block_type.empty() ? job.output.options().block_type
                        : job.out_dtype                          ? std::string(dtype_name(*job.out_dtype))
                                                                 : "",
                        job.hash, base, HashShare{static_cast<std::size_t>(rank), static_cast<std::size_t>(ranks)})});
    spec->out_dtype_given = job.out_dtype.has_value();
    steps.output(*spec, r);
  });
  if (shared) check_decisions(decisions_text(r.output.format_id(), r.plan, *spec));
  // Rank 0 makes the output's temporary file; every other rank opens a writer of its own on it. Nothing is written
  // before every writer exists (the agreement is a barrier): each one sizes the file as it opens it.
  std::optional<Output> out;
  agreed([&] {
    if (rank == 0) out.emplace(r.output, std::move(*spec), protect);
  });
  if (shared) {
    const std::string tmp = broadcast(rank == 0 ? out->tmp_path() : std::string());
    agreed([&] {
      if (rank == 0) return;
      remove_on_signal(tmp);
      out.emplace(r.output, std::move(*spec), tmp);
    });
  }
  // The next server state, a second output beside the main one, committed after it.
  std::optional<Output> state_out;
  if (r.state) {
    state_out.emplace(job.state, output_format(job.state, ""), Overwrite::yes, r.state->output_spec(),
                      files_of(r.inputs));
    r.state->begin_write(state_out->writer());
  }
  if (!shared) {
    pace_hashing(engine, out->spec().provenance);
    engine.run(out->writer());
  } else {
    agreed([&] {
      PartWriter part(out->writer());
      engine.run(part);
    });
    join_fingerprints(out->spec().provenance);
    // Every rank's part is synced (finish_part) before rank 0 finishes the output with what they say of it.
    std::string mine;
    agreed([&] {
      if (rank != 0) mine = out->writer().finish_part();
    });
    const std::vector<std::string> parts = all_gather(mine);
    agreed([&] {
      if (rank != 0) return;
      for (std::size_t k = 1; k < parts.size(); ++k) out->writer().join_part(parts[k]);
      out->writer().finish();
    });
  }
  agreed([&] {
    if (rank == 0) out->commit();
  });
  if (shared) remove_on_signal("");
  if (r.state) {
    r.state->finish();
    state_out->commit();
  }
  steps.committed();
  return r;
}

Run run(const Job& job) {
  Steps plain;
  return run(job, plain);
}

}  // namespace wavg::pipeline
