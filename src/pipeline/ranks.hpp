#pragma once
// The processes of one run started by mpirun or srun (ranks): MPI's set-up and the few collective steps that keep
// them in agreement. MPI is only for coordination; data moves through the file system (a distributed merge) or
// through the reductions of src/train/mpi_reduce.hpp (allreduce, local SGD). Built only with WAVG_MPI; without it
// every run is one rank and with_mpi() says MPI is missing.
//
// Agreement: a step that can fail on some ranks (an input unreadable from one node, a mismatch found in one rank's
// share of the values) runs through agreed(), after which every rank either goes on or throws the same exit code.
// The report is printed once: rank 0 gathers every rank's problems, keeps each distinct one once in rank order
// (a mismatch every rank found is one report), and the others end silently with that code.

#include <functional>
#include <string>
#include <vector>

namespace wavg::pipeline {

// Tells whether this wavg was built with MPI.
bool mpi_built();
// Refuses (usage error, exit 2) a run that needs MPI in a wavg built without it (defined only there).
[[noreturn]] void refuse_without_mpi();
// Tells whether the process was started by an MPI launcher (mpirun, mpiexec, or srun with PMI/PMIx): the
// environment those set for each rank. A distributed merge needs no option of its own.
bool launched_by_mpi();

// Runs `fn` between MPI_Init and MPI_Finalize. An error every rank agreed on (agreed()) is thrown, for rank 0 to
// print, and every rank finalizes at exit, together; any other error is printed with its rank and aborts every
// rank (the others would wait for it in a collective forever).
int with_mpi(const std::function<int()>& fn);
// This rank and the number of ranks: 0 and 1 outside with_mpi().
int mpi_rank();
int mpi_size();

// The collectives below are plain local steps outside with_mpi() or with one rank.
//
// Runs `step` on every rank; when it threw on any, every rank throws an agreed error: rank 0 with the distinct
// problems of every rank, the others with none, all with the worst exit code. Collective.
void agreed(const std::function<void()>& step);
// Returns rank 0's `text` on every rank. Collective.
std::string broadcast(std::string text);
// Returns every rank's `text`, in rank order, on every rank. Collective.
std::vector<std::string> all_gather(const std::string& text);
// Waits until every rank has come here. Collective.
void barrier();

}  // namespace wavg::pipeline
