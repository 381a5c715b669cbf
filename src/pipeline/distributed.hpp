#pragma once
// The parts of run() that differ when mpirun or srun started K > 1 ranks (a distributed merge). Every rank opens
// the same inputs, plans, and builds the same method, all from metadata; rank 0's decisions (the plan, the output's
// layout, the method's parameters) are broadcast and every rank checks its own against them before anything is
// written. The work is divided by partition(): each rank streams only its share of every input through the engine
// and writes it in place into the one temporary file (or folder) rank 0 made (Codec::in_place: safetensors, .pt, a
// Hugging Face or DCP folder), through a writer of its own at the same offsets. The inputs' fingerprints are shared
// out too (HashShare) and joined on rank 0, which then takes what each rank's writer says of its part (the CRC-32s
// of a zip's spans: Writer::finish_part, join_part) and writes the headers. Every step that can fail on one rank is
// agreed() (ranks.hpp), so an error anywhere ends every rank with one report and rank 0's atomic output removes the
// temporary file; the rename happens once, on rank 0, after every rank has synced its part. Data moves through the
// file system only: MPI carries a few bytes of agreement.

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/partition.hpp"
#include "wavg/engine.hpp"
#include "wavg/format.hpp"
#include "wavg/plan.hpp"

namespace wavg::pipeline {

// How the work of one run was divided among the ranks: each rank's bytes (read and written), for -v.
struct Division {
  int ranks = 1;
  std::vector<std::uint64_t> bytes;  // per rank
  std::uint64_t total = 0;
};

// Refuses (usage error) a distributed output `format` cannot take: one not written in place, standard output.
void check_distributed_output(FormatId format, const std::string& path);
// Throws Error (exit 3) on a rank whose decisions (`decisions`, the same text on every rank that read the same
// inputs) differ from rank 0's. Collective.
void check_decisions(const std::string& decisions);
// Returns the decisions of a run to compare across ranks: the output's format and tensors, each plan entry's action,
// and the provenance's entries (command, method and its parameters).
std::string decisions_text(FormatId format, const Plan& plan, const OutputSpec& spec);
// Divides the plan among the ranks (partition()) and restricts `engine` to this rank's share.
Division divide(const Plan& plan, std::size_t inputs, Engine& engine);

// A writer that forwards every value to `to` but leaves finishing to the conductor, which finishes the ranks' parts
// once the fingerprints are joined.
class PartWriter final : public Writer {
 public:
  explicit PartWriter(Writer& to) : m_to(to) {}
  bool holds_template_values(std::size_t index) const override { return m_to.holds_template_values(index); }
  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    m_to.write(index, offset, count, src);
  }
  void finish() override {}

 private:
  Writer& m_to;
};

// Hands every rank's fingerprints (Provenance::own_digests) to every rank's provenance. Collective.
void join_fingerprints(const Provenance& provenance);

// Removes the shared temporary file or folder `path` if this rank (not rank 0, whose atomic output does it) is
// killed by a signal or ends with an error: mpirun ends every rank with SIGTERM when one dies, rank 0 perhaps first.
// Empty: none (the output was committed).
void remove_on_signal(const std::string& path);

}  // namespace wavg::pipeline
