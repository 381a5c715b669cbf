#pragma once
// MPI for local SGD across machines and for `wavg allreduce`. MPI is only the transport: every sum is done by
// wavg's mean over the ranks' values in rank order (mpi_reduce.hpp), because the order in which MPI_Allreduce adds
// is the library's choice and would make results depend on it. Built only with WAVG_MPI; otherwise every entry
// point says so.

#include <functional>
#include <memory>
#include <string>

#include "pipeline/pipeline.hpp"
#include "pipeline/ranks.hpp"
#include "train/driver.hpp"
#include "train/mpi_reduce.hpp"
#include "wavg/atomic_file.hpp"

namespace wavg::train {

// MPI's set-up and the agreement between ranks are the pipeline's (ranks.hpp), which a distributed merge shares.
using pipeline::mpi_built;
using pipeline::mpi_rank;
using pipeline::mpi_size;
using pipeline::with_mpi;

// Returns the averager for one worker per rank.
std::unique_ptr<Averager> make_mpi_averager(Reduction reduction);
// Writes the communication statistics of an averager from make_mpi_averager (see write_stats). Collective.
void write_averager_stats(const Averager& averager, const std::string& path, Overwrite overwrite);

struct AllreduceJob {
  std::string input;               // "{rank}" stands for the rank's number
  pipeline::TargetOptions output;  // checked by rank 0 (pipeline::check_target)
  Reduction reduction = Reduction::reduce_scatter;
  std::string stats;  // JSON statistics file, written by rank 0; empty: none
};

// Averages every rank's `job.input` into `job.output`, written by rank 0. Non-float tensors are
// rank 0's. Returns the number of ranks.
int allreduce_checkpoint(const AllreduceJob& job);

}  // namespace wavg::train
