// MPI's set-up and the agreement between ranks (ranks.hpp), shared by the distributed merge (pipeline.cpp),
// `wavg allreduce` and local SGD (src/train/mpi.cpp).

#include "pipeline/ranks.hpp"

#include <cstdio>
#include <cstdlib>

#include "wavg/error.hpp"

#if WAVG_HAVE_MPI
#include <mpi.h>

#include <nlohmann/json.hpp>
#endif

namespace wavg::pipeline {

bool launched_by_mpi() {
  // Open MPI's mpirun; MPICH's mpiexec and srun --mpi=pmi2; srun --mpi=pmix and Open MPI 5's launcher.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name)) return true;
  return false;
}

#if !WAVG_HAVE_MPI

// Only here: the tests that need MPI skip where the binary holds this message.
void refuse_without_mpi() { fail_usage("this wavg was built without MPI (configure with -DWAVG_MPI=ON)"); }

bool mpi_built() { return false; }
int with_mpi(const std::function<int()>&) { refuse_without_mpi(); }
int mpi_rank() { return 0; }
int mpi_size() { return 1; }
void agreed(const std::function<void()>& step) { step(); }
std::string broadcast(std::string text) { return text; }
std::vector<std::string> all_gather(const std::string& text) { return {text}; }
void barrier() {}

#else

namespace {

// An error every rank knows about (each threw it or was told), so MPI can be shut down in order.
struct Agreed : Error {
  using Error::Error;
};

bool initialised() {
  int init = 0, done = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&done);
  return init && !done;
}

// Returns true when `ok` holds on every rank.
bool all_ok(bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

std::string problems_text(const std::vector<Problem>& problems) {
  nlohmann::json list = nlohmann::json::array();
  for (const Problem& p : problems) list.push_back({p.file, p.what});
  return list.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

bool mpi_built() { return true; }

int mpi_rank() {
  int r = 0;
  if (initialised()) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int mpi_size() {
  int s = 1;
  if (initialised()) MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

int with_mpi(const std::function<int()>& fn) {
  MPI_Init(nullptr, nullptr);
  try {
    const int code = fn();
    MPI_Finalize();
    return code;
  } catch (const Agreed& e) {
    // Rank 0 prints the report after this returns (main's one catch). A rank that ended first would make mpirun
    // end the job, rank 0 perhaps before it printed: so every rank leaves MPI only at exit, together.
    std::atexit([] {
      MPI_Barrier(MPI_COMM_WORLD);
      MPI_Finalize();
    });
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

void agreed(const std::function<void()>& step) {
  if (mpi_size() == 1) return step();
  std::vector<Problem> problems;
  ExitCode code = ExitCode::runtime;
  try {
    step();
  } catch (const Error& e) {
    problems = e.problems();
    if (problems.empty()) problems.push_back({"", e.what()});
    code = e.code();
  }
  if (all_ok(problems.empty())) return;
  int mine = problems.empty() ? 0 : static_cast<int>(code), worst = 0;
  MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  const std::vector<std::string> texts = all_gather(problems_text(problems));
  if (mpi_rank() != 0) throw Agreed(static_cast<ExitCode>(worst), std::vector<Problem>{});
  std::vector<Problem> distinct;
  for (const std::string& text : texts)
    for (const auto& p : nlohmann::json::parse(text)) {
      Problem problem{p[0].get<std::string>(), p[1].get<std::string>()};
      bool seen = false;
      for (const Problem& d : distinct) seen = seen || (d.file == problem.file && d.what == problem.what);
      if (!seen) distinct.push_back(std::move(problem));
    }
  throw Agreed(static_cast<ExitCode>(worst), std::move(distinct));
}

std::string broadcast(std::string text) {
  if (mpi_size() == 1) return text;
  auto n = static_cast<unsigned long long>(text.size());
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  text.resize(n);
  MPI_Bcast(text.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
  return text;
}

std::vector<std::string> all_gather(const std::string& text) {
  const int ranks = mpi_size();
  if (ranks == 1) return {text};
  int mine = static_cast<int>(text.size());
  std::vector<int> sizes(static_cast<std::size_t>(ranks)), at(static_cast<std::size_t>(ranks));
  MPI_Allgather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < ranks; ++r) {
    at[static_cast<std::size_t>(r)] = total;
    total += sizes[static_cast<std::size_t>(r)];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Allgatherv(text.data(), mine, MPI_CHAR, all.data(), sizes.data(), at.data(), MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; r < ranks; ++r)
    out.push_back(all.substr(static_cast<std::size_t>(at[static_cast<std::size_t>(r)]),
                             static_cast<std::size_t>(sizes[static_cast<std::size_t>(r)])));
  return out;
}

void barrier() {
  if (mpi_size() > 1) MPI_Barrier(MPI_COMM_WORLD);
}

#endif

}  // namespace wavg::pipeline
