// MPI transport: set-up, error agreement between ranks, the local-SGD averager and `wavg allreduce`. The
// averaging itself, in rank order so that results equal the single-process engine's bit for bit, is mpi_reduce.cpp.

#include "train/mpi.hpp"

#include <cstdio>

#include "wavg/error.hpp"
#include "wavg/provenance.hpp"

#if WAVG_HAVE_MPI
#include <mpi.h>

#include <filesystem>

#include "wavg/backend.hpp"
#include "wavg/method.hpp"
#endif

namespace wavg::train {

#if !WAVG_HAVE_MPI

namespace {
[[noreturn]] void no_mpi() { fail_usage("this wavg was built without MPI (configure with -DWAVG_MPI=ON)"); }
}  // namespace

bool mpi_built() { return false; }
int with_mpi(const std::function<int()>&) { no_mpi(); }
int mpi_rank() { return 0; }
int mpi_size() { return 1; }
std::unique_ptr<Averager> make_mpi_averager(Reduction) { no_mpi(); }
void write_averager_stats(const Averager&, const std::string&, Overwrite) { no_mpi(); }
int allreduce_checkpoint(const AllreduceJob&) { no_mpi(); }

#else

namespace {

// An error every rank knows about (each threw it or was told), so MPI can be shut down in order.
struct Agreed : Error {
  using Error::Error;
};

// Returns true when `ok` holds on every rank.
bool all_ok(bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

// Runs `step` on every rank; if it fails anywhere, the failing ranks rethrow their error and the others throw a
// silent one with the same exit code class, all as Agreed.
template <class F> void agreed(F&& step) {
  std::vector<Problem> problems;
  ExitCode code = ExitCode::runtime;
  try {
    step();
  } catch (const Error& e) {
    problems = e.problems();
    code = e.code();
  }
  if (all_ok(problems.empty())) return;
  int mine = static_cast<int>(code), worst = 0;
  if (problems.empty()) mine = 0;
  MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  throw Agreed(static_cast<ExitCode>(worst), std::move(problems));
}

class MpiAverager final : public Averager {
 public:
  explicit MpiAverager(Reduction reduction) : m_reducer(reduction) {}
  std::vector<std::size_t> local_workers(std::size_t workers) const override {
    if (workers != static_cast<std::size_t>(mpi_size()))
      fail_usage("--workers " + std::to_string(workers) + " but mpirun started " + std::to_string(mpi_size()) +
                 " ranks (one worker per rank)");
    return {static_cast<std::size_t>(mpi_rank())};
  }
  bool is_root() const override { return mpi_rank() == 0; }
  void average(const std::vector<Mlp*>& local, Mlp& global) override {
    WAVG_ASSERT(local.size() == 1);
    auto backend = make_cpu_backend();
    auto method = make_weighted_mean(*backend, {});
    std::vector<ParamRef> mine = local[0]->params(), out = global.params();
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const PlanEntry entry{mine[i].info, {}, Action::average};
      m_reducer.average(entry, mine[i].data, out[i].data, mine[i].info.count(), *method);
    }
  }
  const MpiReducer& reducer() const { return m_reducer; }

 private:
  MpiReducer m_reducer;
};

// Describes a tensor list in one string, to compare it across ranks.
std::string signature(const std::vector<TensorInfo>& tensors) {
  std::string s;
  for (const TensorInfo& t : tensors) s += t.name + " " + std::string(dtype_name(t.dtype)) + " " + shape_string(t.shape) + "\n";
  return s;
}

std::string broadcast(std::string text) {
  auto n = static_cast<unsigned long long>(text.size());
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  text.resize(n);
  MPI_Bcast(text.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
  return text;
}

}  // namespace

bool mpi_built() { return true; }

int mpi_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int mpi_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

int with_mpi(const std::function<int()>& fn) {
  MPI_Init(nullptr, nullptr);
  try {
    const int code = fn();
    MPI_Finalize();
    return code;
  } catch (const Agreed& e) {
    MPI_Finalize();
    throw Error(e.code(), e.problems());
  } catch (const Error& e) {
    for (const Problem& p : e.problems())
      std::fprintf(stderr, "wavg: error: %s%s%s (rank %d)\n", p.file.c_str(), p.file.empty() ? "" : ": ",
                   p.what.c_str(), mpi_rank());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, static_cast<int>(e.code()));
    return static_cast<int>(e.code());
  }
}

std::unique_ptr<Averager> make_mpi_averager(Reduction reduction) { return std::make_unique<MpiAverager>(reduction); }

void write_averager_stats(const Averager& averager, const std::string& path, Overwrite overwrite) {
  const auto* mpi = dynamic_cast<const MpiAverager*>(&averager);
  WAVG_ASSERT(mpi);
  write_stats(path, mpi->reducer().stats(), mpi->reducer().reduction(), overwrite);
}

int allreduce_checkpoint(const AllreduceJob& job) {
  const std::string& output = job.output;
  const Overwrite overwrite = job.overwrite;
  const int rank = mpi_rank();
  // "{rank}" in the input path names each rank's own file, so one mpirun command line serves every rank.
  std::string local = job.input;
  for (std::size_t at = local.find("{rank}"); at != std::string::npos; at = local.find("{rank}"))
    local.replace(at, 6, std::to_string(rank));
  std::unique_ptr<Reader> reader;
  agreed([&] {
    if (rank == 0) {
      if (overwrite == Overwrite::no && std::filesystem::exists(output))
        throw Error(ExitCode::usage, output, "already exists (use --force to replace it)");
      check_output_not_input(output, {local});
      if (!job.stats.empty()) {
        if (overwrite == Overwrite::no && std::filesystem::exists(job.stats))
          throw Error(ExitCode::usage, job.stats, "already exists (use --force to replace it)");
        if (std::filesystem::absolute(job.stats) == std::filesystem::absolute(output))
          throw Error(ExitCode::usage, job.stats, "--stats and --output name the same file");
        check_output_not_input(job.stats, {local});
      }
    }
    reader = open_reader(local);
  });
  const std::string expected = broadcast(rank == 0 ? signature(reader->tensors()) : std::string());
  agreed([&] {
    if (signature(reader->tensors()) != expected)
      throw Error(ExitCode::incompatible, local,
                  "its tensors (names, dtypes, shapes) differ from rank 0's; see wavg check");
  });

  auto backend = make_cpu_backend();
  auto method = make_weighted_mean(*backend, {});
  std::unique_ptr<AtomicFile> out;
  std::unique_ptr<Writer> writer;
  const OutputSpec spec{reader->tensors(), reader.get(), {}, make_provenance("allreduce", "mean", {local}, "")};
  if (rank == 0) {
    out = std::make_unique<AtomicFile>(output, overwrite);
    writer = create_writer(job.format, out->tmp_path(), output, spec);
  }
  MpiReducer reducer(job.reduction);
  std::vector<double> values, result;
  for (std::size_t i = 0; i < spec.tensors.size(); ++i) {
    const TensorInfo& t = spec.tensors[i];
    const std::uint64_t n = t.count();
    values.resize((t.bytes() + 7) / 8);
    const bool average = is_float(t.dtype);
    if (!average && (rank != 0 || writer->holds_template_values(i))) continue;
    reader->read(i, 0, n, values.data());
    if (average) {
      result.resize(values.size());
      reducer.average(PlanEntry{t, {}, Action::average}, values.data(), result.data(), n, *method);
      if (writer) writer->write(i, 0, n, result.data());
    } else {
      writer->write(i, 0, n, values.data());
    }
  }
  if (writer) {
    writer->finish();
    writer.reset();
    out->commit();
  }
  if (!job.stats.empty()) write_stats(job.stats, reducer.stats(), job.reduction, overwrite);
  return mpi_size();
}

#endif

}  // namespace wavg::train
