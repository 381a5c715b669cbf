#pragma once
// How ranks average one buffer across MPI: reduce-scatter + allgather (each rank moves 2(K-1)/K of the buffer) or
// the older allgather of everything ((K-1) times the buffer), both summing in rank order so that the result is
// bit-identical to the single-process engine. The statistics each rank keeps are written by write_stats.
// Usable only in a build with WAVG_MPI (mpi.cpp refuses every entry point otherwise).

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "train/reduction.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/method.hpp"

#if WAVG_HAVE_MPI
#include <mpi.h>
#endif

namespace wavg::train {

// What one rank did to average: bytes it handed to and got from other ranks (its own share, which MPI copies
// locally, is not counted), the point-to-point messages those amount to, and where the time went.
struct CommStats {
  std::uint64_t bytes_sent = 0, bytes_received = 0, messages = 0;
  std::uint64_t averaged_bytes = 0;  // the size of everything averaged, summed over calls
  double comm_seconds = 0, compute_seconds = 0;

  CommStats& operator+=(const CommStats& o);
};

class MpiReducer {
 public:
#if WAVG_HAVE_MPI
  // Averages over the ranks of `comm` (a group of MPI_Comm_split for hierarchical local SGD), in their order.
  explicit MpiReducer(Reduction reduction, MPI_Comm comm = MPI_COMM_WORLD) : m_reduction(reduction), m_comm(comm) {}
#else
  explicit MpiReducer(Reduction reduction) : m_reduction(reduction) {}
#endif
  // Replaces `dst` (every rank's) by `method` over every rank's `count` elements at `src`, in rank order.
  void average(const PlanEntry& entry, const void* src, void* dst, std::uint64_t count, Method& method);
  const CommStats& stats() const { return m_stats; }
  Reduction reduction() const { return m_reduction; }

 private:
  void gather_chunk(const PlanEntry& entry, std::uint64_t off, const char* src, char* dst, std::uint64_t n,
                    Method& method);
  void scatter_chunk(const PlanEntry& entry, std::uint64_t off, const char* src, char* dst, std::uint64_t n,
                     Method& method);

  int comm_size() const;
  int comm_rank() const;

  Reduction m_reduction;
#if WAVG_HAVE_MPI
  MPI_Comm m_comm;
#endif
  CommStats m_stats;
  std::vector<double> m_buffer;  // received values, one 8-byte-aligned slot per rank
  std::uint64_t m_turn = 0;      // rotates which rank owns the larger shares of an uneven split
};

// Collects every rank's statistics on rank 0, which writes them to `path` as JSON. Every rank must call it.
// `in_groups` (hierarchical local SGD, on every rank or none): the part of `mine` spent in group averages.
void write_stats(const std::string& path, const CommStats& mine, Reduction reduction, Overwrite overwrite,
                 const CommStats* in_groups = nullptr);

}  // namespace wavg::train
