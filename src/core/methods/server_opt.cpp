// The server optimizer's state between rounds, kept as an ordinary checkpoint in any format wavg writes:
//
//   m/<tensor>   float64, the tensor's shape   first moment (momentum, adam, yogi, adagrad)
//   v/<tensor>   float64, the tensor's shape   second moment (adam, yogi, adagrad)
//   round        int64 scalar                  rounds completed
//
// for every averaged tensor of the plan. Moments are float64 whatever the model's dtype: they accumulate over many
// rounds and a float16 second moment would underflow. The next state goes to a temporary file beside the old one
// and replaces it only when the round's output is committed, so a failed round leaves the old state usable. The
// merge pipeline opens the old state and owns the new one's output (src/cli/merge.cpp); this file only maps the
// plan's tensors to the state's.

#include <algorithm>
#include <unordered_map>

#include "wavg/error.hpp"
#include "wavg/federated.hpp"

namespace wavg {

namespace {

constexpr const char* k_round = "round";

bool kind_uses_v(ServerOptKind k) {
  return k == ServerOptKind::adam || k == ServerOptKind::yogi || k == ServerOptKind::adagrad;
}

}  // namespace

bool ServerState::uses_m() const { return kind_uses_v(m_params.kind) || m_params.kind == ServerOptKind::momentum; }
bool ServerState::uses_v() const { return kind_uses_v(m_params.kind); }

ServerState::ServerState(std::string path, std::unique_ptr<Reader> existing, const Plan& plan,
                         const ServerStepParams& params)
    : m_path(std::move(path)), m_plan(plan), m_params(params), m_reader(std::move(existing)) {
  const std::size_t entries = plan.entries.size();
  m_read_m.assign(entries, 0);
  m_read_v.assign(entries, 0);
  m_write_m.assign(entries, 0);
  m_write_v.assign(entries, 0);
  for (std::size_t e = 0; e < entries; ++e) {
    const PlanEntry& entry = plan.entries[e];
    if (entry.action != Action::average || entry.same_as != k_no_entry) continue;  // an alias: its target's state
    if (uses_m()) {
      m_write_m[e] = m_spec.tensors.size();
      m_spec.tensors.push_back({"m/" + entry.info.name, DType::f64, entry.info.shape});
    }
    if (uses_v()) {
      m_write_v[e] = m_spec.tensors.size();
      m_spec.tensors.push_back({"v/" + entry.info.name, DType::f64, entry.info.shape});
    }
  }
  m_spec.tensors.push_back({k_round, DType::i64, {}});

  if (!m_reader) return;  // a fresh start
  std::unordered_map<std::string, std::size_t> found;
  const auto& tensors = m_reader->tensors();
  for (std::size_t i = 0; i < tensors.size(); ++i) found.emplace(tensors[i].name, i);
  std::vector<Problem> problems;
  auto find = [&](const TensorInfo& want) -> std::size_t {
    auto it = found.find(want.name);
    if (it == found.end()) {
      problems.push_back({m_path, want.name + ": missing from the server state (written for another model or "
                                              "another --server-opt?)"});
      return 0;
    }
    const TensorInfo& have = tensors[it->second];
    if (have.shape != want.shape || have.dtype != want.dtype)
      problems.push_back({m_path, want.name + ": expected " + std::string(dtype_name(want.dtype)) + " " +
                                      shape_string(want.shape) + ", found " + std::string(dtype_name(have.dtype)) +
                                      " " + shape_string(have.shape)});
    const std::size_t index = it->second;
    found.erase(it);
    return have.shape == want.shape && have.dtype == want.dtype ? index : 0;
  };
  for (std::size_t e = 0; e < entries; ++e) {
    if (plan.entries[e].action != Action::average || plan.entries[e].same_as != k_no_entry) continue;
    if (uses_m()) m_read_m[e] = find(m_spec.tensors[m_write_m[e]]);
    if (uses_v()) m_read_v[e] = find(m_spec.tensors[m_write_v[e]]);
  }
  const std::size_t round_index = find(m_spec.tensors.back());
  for (const auto& [name, index] : found)
    problems.push_back({m_path, name + ": not part of the server state of this model and --server-opt"});
  if (!problems.empty()) {
    std::sort(problems.begin(), problems.end(), [](const Problem& a, const Problem& b) { return a.what < b.what; });
    throw Error(ExitCode::incompatible, std::move(problems));
  }
  std::int64_t rounds = 0;
  m_reader->read(round_index, 0, 1, &rounds);
  if (rounds < 0) throw Error(ExitCode::incompatible, m_path, "round: negative round counter");
  m_rounds = static_cast<std::uint64_t>(rounds);
}

ServerState::~ServerState() = default;

void ServerState::read(std::size_t entry, std::uint64_t offset, std::uint64_t count, double* m, double* v) {
  if (m && uses_m()) {
    if (m_reader)
      m_reader->read(m_read_m[entry], offset, count, m);
    else
      std::fill(m, m + count, 0.0);
  }
  if (v && uses_v()) {
    if (m_reader)
      m_reader->read(m_read_v[entry], offset, count, v);
    else
      std::fill(v, v + count, m_params.tau * m_params.tau);
  }
}

void ServerState::begin_write(Writer& writer) {
  WAVG_ASSERT(!m_writer);
  m_writer = &writer;
}

void ServerState::write(std::size_t entry, std::uint64_t offset, std::uint64_t count, const double* m,
                        const double* v) {
  WAVG_ASSERT(m_writer);
  if (uses_m()) m_writer->write(m_write_m[entry], offset, count, m);
  if (uses_v()) m_writer->write(m_write_v[entry], offset, count, v);
}

void ServerState::finish() {
  WAVG_ASSERT(m_writer);
  const auto rounds = static_cast<std::int64_t>(m_rounds + 1);
  m_writer->write(m_spec.tensors.size() - 1, 0, 1, &rounds);
  m_writer->finish();
  m_writer = nullptr;
  m_reader.reset();
}

}  // namespace wavg
