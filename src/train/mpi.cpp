// MPI transport: set-up, error agreement between ranks, the local-SGD averager and `wavg allreduce`. The
// averaging itself, in rank order so that results equal the single-process engine's bit for bit, is mpi_reduce.cpp.

#include "train/mpi.hpp"

#include <cstdio>

#include "wavg/error.hpp"
#include "wavg/free_space.hpp"
#include "wavg/provenance.hpp"

#if WAVG_HAVE_MPI
#include <mpi.h>

#include <optional>

#include <map>
#include <nlohmann/json.hpp>

#include "pipeline/pipeline.hpp"
#include "wavg/backend.hpp"
#include "wavg/engine.hpp"
#include "wavg/method.hpp"
#include "wavg/plan.hpp"
#endif

namespace wavg::train {

#if !WAVG_HAVE_MPI

namespace {
[[noreturn]] void no_mpi() { pipeline::refuse_without_mpi(); }
}  // namespace

std::unique_ptr<Averager> make_mpi_averager(Reduction) { no_mpi(); }
void write_averager_stats(const Averager&, const std::string&, Overwrite) { no_mpi(); }
int allreduce_checkpoint(const AllreduceJob&) { no_mpi(); }

#else

namespace {

class MpiAverager final : public Averager {
 public:
  explicit MpiAverager(Reduction reduction) : m_reducer(reduction) {}
  ~MpiAverager() override {
    if (m_group_comm != MPI_COMM_NULL) MPI_Comm_free(&m_group_comm);
  }
  std::vector<std::size_t> local_workers(std::size_t workers) const override {
    if (workers != static_cast<std::size_t>(mpi_size()))
      fail_usage("--workers " + std::to_string(workers) + " but mpirun started " + std::to_string(mpi_size()) +
                 " ranks (one worker per rank)");
    return {static_cast<std::size_t>(mpi_rank())};
  }
  bool is_root() const override { return mpi_rank() == 0; }
  void average(const std::vector<Mlp*>& local, Mlp& global) override { average_over(m_reducer, local, global); }
  void average_groups(const std::vector<Mlp*>& local, std::size_t group_size) override {
    // Ranks r and q share a group when r / G == q / G; ranked by their world rank, so a group sums in worker
    // order exactly as the one-process driver does.
    if (!m_group) {
      MPI_Comm_split(MPI_COMM_WORLD, mpi_rank() / static_cast<int>(group_size), mpi_rank(), &m_group_comm);
      m_group.emplace(m_reducer.reduction(), m_group_comm);
    }
    Mlp mean = *local.at(0);
    average_over(*m_group, local, mean);
    *local[0] = mean;
  }
  // Everything this rank sent and received, in the global and in the group averages.
  CommStats stats() const {
    CommStats all = m_reducer.stats();
    if (m_group) all += m_group->stats();
    return all;
  }
  Reduction reduction() const { return m_reducer.reduction(); }
  // The part of stats() spent in group averages; null in a flat run.
  const CommStats* group_stats() const { return m_group ? &m_group->stats() : nullptr; }

 private:
  static void average_over(MpiReducer& reducer, const std::vector<Mlp*>& local, Mlp& out) {
    WAVG_ASSERT(local.size() == 1);
    auto backend = make_cpu_backend();
    auto method = make_weighted_mean(*backend, {});
    std::vector<ParamRef> mine = local[0]->params(), dst = out.params();
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const PlanEntry entry{mine[i].info, {}, Action::average};
      reducer.average(entry, mine[i].data, dst[i].data, mine[i].info.count(), *method);
    }
  }

  MpiReducer m_reducer;
  MPI_Comm m_group_comm = MPI_COMM_NULL;
  std::optional<MpiReducer> m_group;
};

// Rank 0's tensor list, to check every rank's checkpoint against it with the plan's own messages. Holds no values.
class TensorList final : public Reader {
 public:
  TensorList(std::string name, std::vector<TensorInfo> tensors)
      : m_name(std::move(name)), m_tensors(std::move(tensors)) {}
  const std::string& path() const override { return m_name; }
  std::string format_name() const override { return "tensor list"; }
  std::string layout() const override { return "tensor list"; }
  const std::vector<TensorInfo>& tensors() const override { return m_tensors; }
  void read(std::size_t, std::uint64_t, std::uint64_t, void*) override { WAVG_ASSERT(!"a tensor list has no values"); }
  std::map<std::string, std::string> metadata() const override { return {}; }

 private:
  std::string m_name;
  std::vector<TensorInfo> m_tensors;
};

std::string tensor_list_text(const std::vector<TensorInfo>& tensors) {
  nlohmann::json list = nlohmann::json::array();
  for (const TensorInfo& t : tensors) list.push_back({t.name, dtype_name(t.dtype), t.shape});
  return list.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<TensorInfo> tensor_list(const std::string& text) {
  std::vector<TensorInfo> tensors;
  for (const auto& t : nlohmann::json::parse(text))
    tensors.push_back(
        {t[0].get<std::string>(), *dtype_from_name(t[1].get<std::string>()), t[2].get<std::vector<std::uint64_t> >()});
  return tensors;
}

// The engine's method on every rank: the engine hands it this rank's block, and it averages that block over the
// ranks (average_chunked), so every rank runs the same blocks in the same order.
class RankMean final : public Method {
 public:
  RankMean(Method& mean, MpiReducer& reducer) : m_mean(mean), m_reducer(reducer) {}
  std::string describe() const override { return m_mean.describe(); }
  // Every rank runs the same plan in the same blocks, so each block is one collective call on every rank.
  void combine(const PlanEntry& entry, std::uint64_t, const BlockInputs& in, void* out) override {
    m_reducer.average(entry, in.data[0], out, in.count, m_mean);
  }

 private:
  Method& m_mean;
  MpiReducer& m_reducer;
};

// Where the ranks but 0 send the merged blocks: nowhere. It holds input 1's values, so nothing is copied for it.
class NoOutput final : public Writer {
 public:
  bool holds_template_values(std::size_t) const override { return true; }
  void write(std::size_t, std::uint64_t, std::uint64_t, const void*) override {}
  void finish() override {}
};

}  // namespace

std::unique_ptr<Averager> make_mpi_averager(Reduction reduction) { return std::make_unique<MpiAverager>(reduction); }

void write_averager_stats(const Averager& averager, const std::string& path, Overwrite overwrite) {
  const auto* mpi = dynamic_cast<const MpiAverager*>(&averager);
  WAVG_ASSERT(mpi);
  write_stats(path, mpi->stats(), mpi->reduction(), overwrite, mpi->group_stats());
}

// Each rank's share of an engine block for allreduce: the block is the reducer's chunk (this much per rank), so
// one block is one collective reduction and memory stays at a few blocks per rank for any model size.
constexpr std::uint64_t k_block_bytes = 4u << 20;

// Not through pipeline::run, which conducts one process's merge: here every step is collective. Each phase that can
// fail (the output's checks on rank 0, opening this rank's file, the plan) is agreed() so that all ranks stop
// together instead of leaving the others blocked in a reduction; the plan is built against rank 0's broadcast
// tensor list, so every rank streams the same blocks in the same order, and then reads only its own file; the
// engine's block is one MPI chunk per rank; and only rank 0 has an Output (the others write nowhere). It does use
// the conductor's parts: check_target/settle for the target (every target merge takes), Output, pace_hashing.
int allreduce_checkpoint(const AllreduceJob& job) {
  const std::string& output = job.output.path;
  const Overwrite overwrite = job.output.overwrite;
  pipeline::Target target;
  const int rank = mpi_rank();
  // "{rank}" in the input path names each rank's own file, so one mpirun command line serves every rank.
  std::string local = job.input;
  for (std::size_t at = local.find("{rank}"); at != std::string::npos; at = local.find("{rank}"))
    local.replace(at, 6, std::to_string(rank));
  std::unique_ptr<Reader> reader;
  pipeline::agreed([&] {
    if (rank == 0) {
      target = pipeline::check_target(job.output, {local});
      if (!job.stats.empty()) {
        if (std::filesystem::absolute(job.stats) == std::filesystem::absolute(output))
          throw Error(ExitCode::usage, job.stats, "--stats and --output name the same file");
        pipeline::check_output(job.stats, {local}, overwrite);
      }
    }
    reader = open_reader(local);
    if (rank == 0) pipeline::settle(target, {reader.get()});
  });
  // Every rank checks its checkpoint against rank 0's tensor list, in rank 0's order, as merge checks input 2
  // against input 1; the plan over this rank's checkpoint alone then streams it in that order on every rank.
  TensorList rank0("rank 0's checkpoint",
                   tensor_list(pipeline::broadcast(rank == 0 ? tensor_list_text(reader->tensors()) : std::string())));
  Plan plan;
  pipeline::agreed([&] { plan = build_plan({&rank0, reader.get()}, PlanOptions{}); });
  for (PlanEntry& e : plan.entries) e.source = {e.source[1]};
  // Rank 0 writes; every rank learns before the reduction starts when its disk cannot hold the output.
  pipeline::agreed([&] {
    if (rank == 0) check_free_space(output, least_output_bytes(output_tensors(plan)));
  });

  auto backend = make_cpu_backend();
  auto mean = make_weighted_mean(*backend, {});
  MpiReducer reducer(job.reduction);
  RankMean method(*mean, reducer);
  // Blocks of one MPI chunk: memory stays at a few chunks per rank for any model size.
  Engine engine(plan, {reader.get()}, method, *backend, k_block_bytes * static_cast<std::uint64_t>(mpi_size()));
  std::optional<pipeline::Output> out;
  if (rank == 0)
    out.emplace(
        target,
        OutputSpec{
            output_tensors(plan), reader.get(), {}, make_provenance("allreduce", method.describe(), {local}, "")},
        reader->files());
  NoOutput nowhere;
  if (out) pipeline::pace_hashing(engine, out->spec().provenance);
  engine.run(out ? out->writer() : nowhere);
  if (out) out->commit();
  if (!job.stats.empty()) write_stats(job.stats, reducer.stats(), job.reduction, overwrite);
  return mpi_size();
}

#endif

}  // namespace wavg::train
