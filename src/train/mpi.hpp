#pragma once
// MPI for local SGD across machines and for `wavg allreduce`. MPI is only the transport: every sum is done by
// wavg's mean over the ranks' values gathered in rank order, because the order in which MPI_Allreduce adds is the
// library's choice and would make results depend on it. Built only with WAVG_MPI; otherwise every entry point
// says so.

#include <functional>
#include <memory>
#include <string>

#include "train/driver.hpp"
#include "wavg/atomic_file.hpp"

namespace wavg::train {

// Tells whether this wavg was built with MPI.
bool mpi_built();

// Runs `fn` between MPI_Init and MPI_Finalize. An error that only some ranks see is printed and aborts every rank
// (the others would wait for it forever); one that every rank agreed on is thrown after MPI_Finalize.
int with_mpi(const std::function<int()>& fn);
int mpi_rank();
int mpi_size();

// Returns the averager for one worker per rank.
std::unique_ptr<Averager> make_mpi_averager();

// Averages the checkpoint `local` of every rank into `output`, written by rank 0 in `format`. Non-float tensors
// are rank 0's. Returns the number of ranks.
int allreduce_checkpoint(const std::string& local, const std::string& output, const std::string& format,
                         Overwrite overwrite);

}  // namespace wavg::train
