#include "support/memory_checkpoint.hpp"

#include <memory>
#include <optional>

#include "pipeline/pipeline.hpp"

namespace wavg::test {

Values run_federated(const std::vector<Values>& clients, const Values& base, FederatedOptions options,
                     const std::string& state_path, std::vector<std::string>* report, std::uint64_t block_bytes) {
  std::vector<std::unique_ptr<MemoryReader>> readers;
  std::vector<Reader*> inputs;
  for (std::size_t k = 0; k < clients.size(); ++k) {
    std::string name = "client";  // built in two steps: GCC 12 warns falsely on "literal" + std::string
    name += std::to_string(k + 1);
    readers.push_back(std::make_unique<MemoryReader>(name, clients[k]));
    inputs.push_back(readers.back().get());
  }
  MemoryReader base_reader("base", base);
  options.has_base = !base.empty();
  options.has_state = !state_path.empty();
  validate_federated(options, clients.size());
  const Plan plan = build_plan(inputs, {});
  auto owned_state = state_path.empty() ? nullptr
                                        : std::make_unique<ServerState>(
                                              state_path, pipeline::open_if_exists(state_path), plan, options.server);
  ServerState* state = owned_state.get();
  auto backend = make_cpu_backend();
  auto method = make_federated(*backend, plan, options, state);
  Engine engine(plan, inputs, *method, *backend, block_bytes);
  if (!base.empty()) engine.set_base(&base_reader, match_base(plan, base_reader));
  engine.verify();
  MemoryWriter writer(plan);
  std::optional<pipeline::Output> state_out;
  if (state) {
    state_out.emplace(state_path, output_format(state_path, ""), Overwrite::yes, state->output_spec(),
                      std::vector<std::string>{});
    state->begin_write(state_out->writer());
  }
  engine.run(writer);
  if (state) {
    state->finish();
    state_out->commit();
  }
  if (report) *report = method->report();
  return writer.values;
}

}  // namespace wavg::test
