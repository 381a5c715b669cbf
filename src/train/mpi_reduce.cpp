// Averaging a buffer across K ranks with the sum in rank order.
//
// MPI_Allreduce would add in whatever order the library's algorithm picks (a ring adds rank r's value first on one
// element and last on another), so its result depends on the library, the rank count and the message sizes. wavg's
// promise is that `allreduce` and `local-sgd --backend mpi` give the bytes `wavg merge` and the one-process driver
// give: every element summed in double over the inputs in order 0..K-1, divided once, rounded once. So MPI only
// moves bytes and the sum is wavg's own (the Method on the CPU backend, the code `wavg merge` runs).
//
// gather (the first version): MPI_Allgather brings every rank's chunk to every rank, and each rank sums all of it.
// Simple, but each rank receives (K-1) times the model and every rank does the whole arithmetic.
//
// reduce-scatter (the default): a chunk of n elements is cut into K pieces of floor or ceil n/K elements, and
// each rank owns one piece. MPI_Alltoallv sends each rank the owner's piece of every rank's chunk, so the owner
// holds K copies of its piece, one per rank, in rank order: it sums them exactly as above. MPI_Allgatherv then
// hands every owner's result to every rank. A rank sends (K-1)/K of the chunk in each step, 2(K-1)/K in all, the
// bandwidth-optimal amount a ring all-reduce moves, and the arithmetic is split K ways. The sum of an element
// involves the same values in the same order as in the gather path, so the two give identical bytes.
//
// An uneven split gives n mod K ranks one element more; which ranks rotates from chunk to chunk (m_turn), so no
// rank sends noticeably more than 2(K-1)/K over a model of many tensors. The statistics count the bytes each rank
// hands to other ranks and the messages that takes (K-1 per collective), not what the library does inside them.

#include "train/mpi_reduce.hpp"

#if WAVG_HAVE_MPI
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "train/mpi.hpp"
#include "train/run_dir.hpp"
#include "wavg/error.hpp"
#endif

namespace wavg::train {

CommStats& CommStats::operator+=(const CommStats& o) {
  bytes_sent += o.bytes_sent;
  bytes_received += o.bytes_received;
  messages += o.messages;
  averaged_bytes += o.averaged_bytes;
  comm_seconds += o.comm_seconds;
  compute_seconds += o.compute_seconds;
  return *this;
}

#if WAVG_HAVE_MPI

namespace {

// Per-rank chunk size of the gather path, and so the buffer a rank holds in either path: K times this.
constexpr std::uint64_t k_chunk_bytes = 4u << 20;
// MPI counts and displacements are int: a reduce-scatter chunk stays well below 2^31 bytes.
constexpr std::uint64_t k_max_scatter_bytes = 1u << 30;

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

int MpiReducer::comm_size() const {
  int s = 1;
  MPI_Comm_size(m_comm, &s);
  return s;
}

int MpiReducer::comm_rank() const {
  int r = 0;
  MPI_Comm_rank(m_comm, &r);
  return r;
}

void MpiReducer::average(const PlanEntry& entry, const void* src, void* dst, std::uint64_t count, Method& method) {
  const std::uint64_t elem = dtype_size(entry.info.dtype), ranks = static_cast<std::uint64_t>(comm_size());
  const std::uint64_t per_rank = std::max<std::uint64_t>(1, k_chunk_bytes / elem);
  const std::uint64_t step = m_reduction == Reduction::gather
                                 ? per_rank
                                 : std::max<std::uint64_t>(1, std::min(per_rank * ranks, k_max_scatter_bytes / elem));
  m_stats.averaged_bytes += count * elem;
  for (std::uint64_t off = 0; off < count; off += step) {
    const std::uint64_t n = std::min(step, count - off);
    const char* s = static_cast<const char*>(src) + off * elem;
    char* d = static_cast<char*>(dst) + off * elem;
    if (m_reduction == Reduction::gather)
      gather_chunk(entry, off, s, d, n, method);
    else
      scatter_chunk(entry, off, s, d, n, method);
  }
}

void MpiReducer::gather_chunk(const PlanEntry& entry, std::uint64_t off, const char* src, char* dst, std::uint64_t n,
                              Method& method) {
  const std::uint64_t elem = dtype_size(entry.info.dtype), bytes = n * elem, words = (bytes + 7) / 8;
  const int ranks = comm_size();
  m_buffer.resize(words * static_cast<std::size_t>(ranks));
  auto t = Clock::now();
  // Each rank's chunk lands at a multiple of 8 bytes, so any dtype is aligned.
  MPI_Allgather(src, static_cast<int>(bytes), MPI_BYTE, m_buffer.data(), static_cast<int>(words * 8), MPI_BYTE, m_comm);
  m_stats.comm_seconds += since(t);
  const auto others = static_cast<std::uint64_t>(ranks - 1);
  m_stats.bytes_sent += bytes * others;
  m_stats.bytes_received += bytes * others;
  m_stats.messages += others;

  t = Clock::now();
  std::vector<const void*> pointers(static_cast<std::size_t>(ranks));
  for (std::size_t r = 0; r < pointers.size(); ++r) pointers[r] = m_buffer.data() + words * r;
  method.combine(entry, off, BlockInputs{entry.info.dtype, n, pointers}, dst);
  m_stats.compute_seconds += since(t);
}

void MpiReducer::scatter_chunk(const PlanEntry& entry, std::uint64_t off, const char* src, char* dst, std::uint64_t n,
                               Method& method) {
  const std::uint64_t elem = dtype_size(entry.info.dtype);
  const int ranks = comm_size(), me = comm_rank();
  const auto k = static_cast<std::uint64_t>(ranks);
  // Piece j is elements [n*j/K, n*(j+1)/K); rank r owns piece (r + turn) mod K.
  std::vector<int> begin(k), size(k);
  for (std::uint64_t r = 0; r < k; ++r) {
    const std::uint64_t j = (r + m_turn) % k;
    begin[r] = static_cast<int>(n * j / k * elem);
    size[r] = static_cast<int>((n * (j + 1) / k - n * j / k) * elem);
  }
  m_turn = (m_turn + n % k) % k;
  const auto mine = static_cast<std::size_t>(me);
  const std::uint64_t my_elems = static_cast<std::uint64_t>(size[mine]) / elem;
  const std::uint64_t words = (static_cast<std::uint64_t>(size[mine]) + 7) / 8;
  m_buffer.resize(std::max<std::uint64_t>(1, words * k));
  // What this rank receives: its piece of rank q's chunk, at an 8-byte-aligned slot q.
  std::vector<int> recv_size(k, size[mine]), recv_at(k);
  for (std::uint64_t q = 0; q < k; ++q) recv_at[q] = static_cast<int>(q * words * 8);

  auto t = Clock::now();
  MPI_Alltoallv(src, size.data(), begin.data(), MPI_BYTE, m_buffer.data(), recv_size.data(), recv_at.data(), MPI_BYTE,
                m_comm);
  m_stats.comm_seconds += since(t);

  t = Clock::now();
  if (my_elems > 0) {
    std::vector<const void*> pointers(k);
    for (std::uint64_t q = 0; q < k; ++q) pointers[q] = m_buffer.data() + q * words;
    method.combine(entry, off + static_cast<std::uint64_t>(begin[mine]) / elem,
                   BlockInputs{entry.info.dtype, my_elems, pointers}, dst + begin[mine]);
  }
  m_stats.compute_seconds += since(t);

  t = Clock::now();
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, dst, size.data(), begin.data(), MPI_BYTE, m_comm);
  m_stats.comm_seconds += since(t);

  const auto chunk = n * elem, own = static_cast<std::uint64_t>(size[mine]);
  // Alltoallv: the other ranks' pieces out, my piece of theirs in; Allgatherv: my result out, theirs in.
  m_stats.bytes_sent += (chunk - own) + own * (k - 1);
  m_stats.bytes_received += own * (k - 1) + (chunk - own);
  m_stats.messages += 2 * (k - 1);
}

namespace {

// Every rank's statistics, gathered on rank 0 (elsewhere: empty).
std::vector<CommStats> gather_stats(const CommStats& mine) {
  const auto ranks = static_cast<std::size_t>(mpi_size());
  const std::uint64_t counts[4] = {mine.bytes_sent, mine.bytes_received, mine.messages, mine.averaged_bytes};
  const double seconds[2] = {mine.comm_seconds, mine.compute_seconds};
  std::vector<std::uint64_t> all_counts(4 * ranks);
  std::vector<double> all_seconds(2 * ranks);
  MPI_Gather(counts, 4, MPI_UINT64_T, all_counts.data(), 4, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  MPI_Gather(seconds, 2, MPI_DOUBLE, all_seconds.data(), 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::vector<CommStats> all;
  if (mpi_rank() == 0)
    for (std::size_t r = 0; r < ranks; ++r)
      all.push_back({all_counts[4 * r], all_counts[4 * r + 1], all_counts[4 * r + 2], all_counts[4 * r + 3],
                     all_seconds[2 * r], all_seconds[2 * r + 1]});
  return all;
}

nlohmann::json stats_json(const CommStats& s) {
  return {{"bytes_sent", s.bytes_sent},
          {"bytes_received", s.bytes_received},
          {"messages", s.messages},
          {"comm_seconds", s.comm_seconds},
          {"compute_seconds", s.compute_seconds}};
}

}  // namespace

void write_stats(const std::string& path, const CommStats& mine, Reduction reduction, Overwrite overwrite,
                 const CommStats* in_groups) {
  const std::vector<CommStats> all = gather_stats(mine);
  const std::vector<CommStats> groups = in_groups ? gather_stats(*in_groups) : std::vector<CommStats>{};
  if (mpi_rank() != 0) return;
  nlohmann::json per_rank = nlohmann::json::array();
  for (std::size_t r = 0; r < all.size(); ++r) {
    nlohmann::json row = {{"rank", r}};
    row.update(stats_json(all[r]));
    if (in_groups) row["in_groups"] = stats_json(groups[r]);
    per_rank.push_back(row);
  }
  const nlohmann::json j = {{"algorithm", std::string(name_of(k_reduction_names, reduction))},
                            {"ranks", all.size()},
                            {"averaged_bytes", mine.averaged_bytes},
                            {"per_rank", per_rank}};
  write_text_atomically(path, j.dump(2) + "\n", overwrite);
}

#endif

}  // namespace wavg::train
