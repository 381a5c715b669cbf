// A distributed merge's steps (distributed.hpp).

#include "pipeline/distributed.hpp"

#include <cstring>
#include <nlohmann/json.hpp>

#include "pipeline/ranks.hpp"
#include "wavg/error.hpp"
#include "wavg/signals.hpp"
#include "wavg/stdio_files.hpp"

namespace wavg::pipeline {

void check_distributed_output(FormatId format, const std::string& path) {
  if (path == k_stdio_name)
    throw Error(ExitCode::usage, path,
                "a merge over " + std::to_string(mpi_size()) + " ranks writes a file, not standard output");
  const Codec& c = codec(format);
  if (c.in_place) return;
  std::vector<const char*> shared;
  for (const Codec& row : codecs())
    if (row.in_place) shared.push_back(row.name);
  std::string names;
  for (std::size_t i = 0; i < shared.size(); ++i)
    names += (i == 0 ? "" : i + 1 == shared.size() ? " or " : ", ") + std::string(shared[i]);
  throw Error(ExitCode::usage, path,
              "a merge over " + std::to_string(mpi_size()) + " ranks writes " + names + " (each rank writes its " +
                  "share in place); " + c.name + " outputs are made by one process: run without mpirun, or " +
                  "merge to .safetensors and convert");
}

std::string decisions_text(FormatId format, const Plan& plan, const OutputSpec& spec) {
  nlohmann::json d;
  d["format"] = codec(format).name;
  nlohmann::json entries = nlohmann::json::array();
  for (const PlanEntry& e : plan.entries)
    entries.push_back({e.info.name, dtype_name(e.info.dtype), e.info.shape, static_cast<int>(e.action),
                       dtype_name(e.out_dtype), e.copy_from, e.same_as == k_no_entry ? -1 : static_cast<long long>(e.same_as)});
  d["plan"] = std::move(entries);
  d["dropped"] = spec.dropped;
  d["provenance"] = spec.provenance.layout_entries();
  return d.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void check_decisions(const std::string& decisions) {
  const std::string rank0 = broadcast(decisions);
  agreed([&] {
    if (decisions == rank0) return;
    std::size_t at = 0;
    while (at < decisions.size() && at < rank0.size() && decisions[at] == rank0[at]) ++at;
    const std::size_t from = at < 40 ? 0 : at - 40;
    throw Error(ExitCode::incompatible, "rank " + std::to_string(mpi_rank()),
                "its plan differs from rank 0's (the inputs differ between the nodes?): '" +
                    decisions.substr(from, 80) + "' where rank 0 has '" + rank0.substr(from, 80) + "'");
  });
}

Division divide(const Plan& plan, std::size_t inputs, Engine& engine) {
  // What one element moves: read from every input an average reads (or the one a copy reads from) and written once.
  std::vector<PartItem> items;
  for (const PlanEntry& e : plan.entries) {
    const std::size_t from = e.same_as;
    const PlanEntry& source = plan.entries[from == k_no_entry ? items.size() : from];
    const std::size_t read = source.action == Action::average ? inputs : 1;
    items.push_back({e.info.count(), read * dtype_size(source.info.dtype) + dtype_size(source.out_dtype)});
  }
  Division d;
  d.ranks = mpi_size();
  const std::vector<Share> shares =
      partition(items, d.ranks, [&](std::size_t entry, std::uint64_t wanted) { return engine.share_cut(entry, wanted); });
  for (const Share& s : shares) {
    d.bytes.push_back(share_bytes(s, items));
    d.total += d.bytes.back();
  }
  std::vector<Engine::ElementRange> mine(plan.entries.size(), {0, 0});
  for (const Piece& p : shares[static_cast<std::size_t>(mpi_rank())]) mine[p.entry] = {p.begin, p.end};
  engine.set_share(std::move(mine));
  return d;
}

void join_fingerprints(const Provenance& provenance) {
  std::vector<std::string> digests;
  agreed([&] { digests = provenance.own_digests(); });
  for (const std::string& text : all_gather(nlohmann::json(digests).dump())) {
    const auto theirs = nlohmann::json::parse(text).get<std::vector<std::string>>();
    if (!theirs.empty()) provenance.join_digests(theirs);
  }
}

namespace {

char g_part_path[4096];  // remove_on_signal's file or folder; fixed storage, read by a signal handler

void remove_part() noexcept {
  if (g_part_path[0]) signals::remove_tree(g_part_path);
}

}  // namespace

void remove_on_signal(const std::string& path) {
  signals::DeferInterrupts hold;
  if (path.size() >= sizeof g_part_path) return;  // rank 0's own cleanup still covers it
  std::memcpy(g_part_path, path.c_str(), path.size() + 1);
  if (path.empty()) return;
  signals::add_cleanup(remove_part);
}

}  // namespace wavg::pipeline
