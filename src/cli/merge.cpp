// wavg merge: open inputs, build the plan, run the engine, commit the output; and the same merge verified without
// its output (wavg check).

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "cli/merge.hpp"

#include "cli/eval_command.hpp"
#include "cli/progress.hpp"
#include "cli/recipe_chat.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/ranks.hpp"
#include "wavg/engine.hpp"
#include "wavg/error.hpp"
#include "wavg/federated.hpp"
#include "wavg/free_cores.hpp"
#include "wavg/lora_apply.hpp"
#include "wavg/lora_extract.hpp"
#include "wavg/lora_merge.hpp"
#include "wavg/method_spec.hpp"
#include "wavg/provenance.hpp"

namespace wavg::cli {

namespace {

// With --recipe, sets the inputs, base, method and its values from the mergekit YAML (recipe.cpp); a YAML file
// given as an input is pointed at --recipe.
void apply_recipe(MergeOptions& o) {
  for (const std::string& in : o.inputs)
    if (looks_like_recipe(in)) fail_usage(in + " looks like a mergekit recipe: run it with --recipe " + in);
  if (o.recipe_path.empty()) return;
  if (!o.inputs.empty() || !o.fed.base.empty() || !o.weights.empty() || !o.task.params.empty() || o.task.rescale ||
      o.task.normalize || o.out_dtype || o.fed.options.robust.method != &default_method())
    fail_usage("--recipe gives the models, base, method, parameters and dtype itself: give them only there");
  Recipe& r = o.recipe.emplace(read_recipe(o.recipe_path));
  o.inputs = r.inputs;
  o.fed.base = r.base;
  o.fed.options.robust.method = r.method;
  for (std::size_t k = 0; k < r.weights.size(); ++k) {
    char exact[32];
    std::snprintf(exact, sizeof exact, "%s%.17g", k ? "," : "", r.weights[k]);
    o.weights += exact;
  }
  o.task = TaskCli{};
  o.task.params = r.params;
  o.task.rescale = r.rescale;
  o.task.normalize = r.normalize;
  o.task.values = r.values;
  o.task.linear = r.linear;
  o.out_dtype = r.out_dtype;
  o.companions = MergeOptions::Companions::base;  // mergekit's donor: base_model (else input 1)
  if (r.int8_mask)
    note(o.verbosity, 1, "int8_mask: mergekit's memory saving for its masks; wavg's results are the same without it");
  if (r.chat_template) {
    std::vector<std::string> models = r.inputs;
    if (!r.base.empty()) models.insert(models.begin(), r.base);
    o.chat_template = resolve_chat_template(*r.chat_template, models);
    if (*r.chat_template == "auto")
      note(o.verbosity, 1,
           o.chat_template.empty() ? "chat_template: auto found no template among the models; the tokenizer's stays"
                                   : "chat_template: auto chose the template most of the models carry");
  }
}

// `described`: what the run computed (MergeSteps::method_text).
void report(const MergeOptions& o, FormatId format, const Plan& plan, const Method& method,
            const std::vector<Reader*>& inputs, const std::string& described) {
  report_roles(plan, o.verbosity);
  note_kept_entries(o.verbosity, *inputs.front(), format);
  for (const std::string& d : method.decisions()) note(o.verbosity, 1, d);
  for (const auto& w : plan.warnings) note(o.verbosity, 0, "warning: " + w);
  report_excluded(plan, o.verbosity);
  if (!plan.dropped.empty()) {
    note(o.verbosity, 0,
         "dropped " + std::to_string(plan.dropped.size()) +
             " tensor(s) missing from some inputs (--tensors intersection)");
    for (const auto& name : plan.dropped) note(o.verbosity, 1, "dropped: " + name);
  }
  if (o.verbosity.quiet) return;
  const std::size_t averaged = plan.count(Action::average);
  const std::size_t other = plan.entries.size() - averaged;
  std::FILE* out = report_stream(o.output);
  // An output named without a format (ckpt-5) says which one it took from the inputs.
  const std::string target =
      o.output + (o.format.empty() && names_no_format(o.output) ? " (" + std::string(codec(format).name) + ")" : "");
  std::fprintf(out, "merged %zu inputs (%s) into %s: %zu tensors averaged (%llu values, %s), %zu copied\n",
               o.inputs.size(), inputs.front()->layout().c_str(), target.c_str(), averaged,
               static_cast<unsigned long long>(plan.values(Action::average)), described.c_str(), other);
  for (const std::string& line : method.report()) std::fprintf(out, "%s\n", line.c_str());
}

// Every path the output must not replace: the inputs, the base and the server state.
std::vector<std::string> protected_paths(const MergeOptions& o) {
  std::vector<std::string> paths = o.inputs;
  if (o.recipe && !o.recipe->sliced.inputs.empty()) paths = o.recipe->sliced.models();
  if (!o.fed.base.empty()) paths.push_back(o.fed.base);
  if (!o.fed.state.empty()) paths.push_back(o.fed.state);
  return paths;
}

// Tells whether a task-vector method (task arithmetic, TIES, DARE, SLERP, model stock) runs.
bool task_run(const MergeOptions& o) { return is_task_method(*o.fed.options.robust.method); }

// Tells whether a federated method runs rather than the (weighted) mean.
bool federated_run(const MergeOptions& o) {
  return !task_run(o) && (is_federated(o.fed.options) || !o.fed.weight_by.empty());
}

// Returns the subcommand's name, for messages.
std::string_view command(const MergeOptions& o) { return o.use == MergeUse::merge ? "merge" : "check"; }

// Refuses `-w 1 2 a.h5 b.h5`: the shell split the weights, and `2` became an input. A number that names no file
// after --weights is taken for that.
void check_split_weights(const MergeOptions& o) {
  if (o.weights.empty()) return;
  std::string rest;
  for (const std::string& in : o.inputs) {
    char* end = nullptr;
    std::strtod(in.c_str(), &end);
    std::error_code ec;
    if (!in.empty() && *end == '\0' && !std::filesystem::exists(in, ec)) rest += "," + in;
  }
  if (!rest.empty())
    fail_usage("'" + rest.substr(1) + "' is no checkpoint: weights are comma-separated: -w " + o.weights + rest);
}

// The task-vector options outside the task-vector methods are refused, never ignored, but for --normalize: the plain
// (weighted) mean normalises its weights, so --no-normalize there is mergekit's linear without normalisation
// (sum_k w_k x_k), run as a recipe's `normalize: false` runs it; the federated methods (a base, --weight-by, a robust
// aggregator) refuse it too.
void apply_task_options_outside(MergeOptions& o) {
  if (task_run(o)) return;
  const TaskCli& t = o.task;
  const std::string method(o.fed.options.robust.method->name);
  for (const auto& [key, value] : t.params)
    fail_usage(std::string(option_named(key)) + " does not apply to --method " + method);
  if (t.rescale) fail_usage("--rescale does not apply to --method " + method);
  if (!t.normalize) return;
  if (federated_run(o))
    fail_usage("--normalize does not apply to --method " + method +
               (o.fed.options.robust.method == &default_method() ? " with a federated option (--base, --weight-by, ...)"
                                                                 : ""));
  if (*t.normalize) return;  // the mean's own rule
  o.fed.options.robust.method = &method_row("task-arithmetic");
  o.task.linear = true;
}

// The LoRA options against each other and the rest (usage errors): --lora-extract takes the base and its fine-tune
// and writes an adapter folder (--format peft unless peft-bin is given); --lora-apply takes its base as input 1, so
// no --base, and no --staleness (its clients' metadata would be the base's).
void check_lora_options(MergeOptions& o) {
  if (o.lora_apply && (!o.fed.base.empty() || !o.fed.staleness.empty()))
    fail_usage("--lora-apply folds adapters into input 1, the base (with a federated option, the round's global "
               "model): give no --base or --staleness");
  if (!o.lora_extract) return;
  if (o.inputs.size() != 2 || o.lora_apply || !o.lora.empty() || !o.weights.empty() || !o.fed.weight_by.empty() ||
      !o.fed.base.empty() || is_federated(o.fed.options) || task_run(o))
    fail_usage("--lora-extract RANK takes two inputs, the base and its fine-tune, and no other method, weights or "
               "base");
  if (o.format.empty()) o.format = codec(FormatId::peft).name;
  if (o.format != codec(FormatId::peft).name && o.format != codec(FormatId::peft_bin).name)
    fail_usage("--lora-extract writes a PEFT adapter folder: --format peft or peft-bin, not " + o.format);
}

// mergekit's wrappers pass a seed with every recipe: every method takes --seed, and -v says where nothing is drawn
// (only DARE's and DELLA's masks and the privacy noise are).
void note_unused_seed(const MergeOptions& o) {
  const FederatedOptions& fed = o.fed.options;
  if (!fed.privacy.seed) return;
  const MethodSpec& row = task_run(o) ? task_row(o.task.resolve(fed, {})) : *fed.robust.method;
  if (row.sparsify == Sparsify::random || fed.privacy.noise_multiplier != 0) return;
  note(o.verbosity, 1,
       "--seed: " + std::string(row.linear ? row.mergekit : row.name) + " draws nothing at random; the seed is unused");
}

// Checks the options against each other and the number of inputs (usage errors, exit 2), then the output, before
// any file opens; returns the job. A checkpoint sequence (--last) is expanded first: it supplies the inputs and
// their weights.
pipeline::Job validate(MergeOptions& o) {
  check_split_weights(o);
  apply_sequence(o.seq, o.inputs, o.weights, o.verbosity);
  o.plan.newest_input = newest_input(o.seq, o.inputs.size());
  if (!o.eval.empty()) check_eval_command(o.eval);
  FederatedOptions& fed = o.fed.options;
  check_lora_options(o);
  o.fed.resolve();
  if (o.lora_apply && is_federated(fed)) {  // a round over adapters: input 1 is the global model
    o.fed.base = o.inputs.front();
    fed.has_base = true;
  }
  apply_task_options_outside(o);
  const std::size_t least = fed.has_base || fed.inputs == InputKind::deltas ? 1 : 2;
  if (o.inputs.size() < least)
    fail_usage(std::string(command(o)) + " needs at least two inputs (one with --base or deltas)");
  if (!o.weights.empty() && !o.fed.weight_by.empty()) fail_usage("give either --weights or --weight-by, not both");
  check_align_inputs(o.align, fed.has_base || fed.inputs == InputKind::deltas);
  const std::vector<double> weights = parse_weights(o.weights);
  // With --lora-apply the weights are the adapters', input 1 being the base.
  const std::size_t clients = o.inputs.size() - (o.lora_apply ? 1 : 0);
  if (!task_run(o)) validate_weights(weights, clients);  // task vectors: negatives
  // Validation only needs to know whether there are weights; --weight-by's values come from the inputs.
  fed.weights = o.fed.weight_by.empty() ? weights : std::vector<double>(clients, 1.0);
  if (federated_run(o)) validate_federated(fed, clients);
  if (task_run(o)) validate_task(o.task.resolve(fed, fed.weights), fed, o.inputs.size());
  note_unused_seed(o);
  if (fed.server.kind != ServerOptKind::none && fed.server.kind != ServerOptKind::sgd && !fed.has_state)
    note(o.verbosity, 0, "no --state: the server optimizer's moments start from zero and are not saved");
  const Overwrite overwrite = o.force ? Overwrite::yes : Overwrite::no;
  pipeline::Target target;  // check: none
  if (o.use == MergeUse::merge)
    target = pipeline::check_target({o.output, o.format, overwrite, o.tf_state, o.shard_size, o.block_type},
                                    protected_paths(o));
  if (!o.lora.empty()) parse_lora_merge(o.lora);
  if (o.recipe && o.recipe->chat_template && target.format_id() != FormatId::none && !codec(target.format_id()).folder)
    fail_usage("the recipe's chat_template goes into the tokenizer of a Hugging Face folder: give -o DIR/");
  return {o.inputs,    std::move(target), std::string(command(o)), o.plan, o.out_dtype, o.hash, weights, o.fed.base,
          o.fed.state, fed.server};
}

// What merge adds to the plain job: alignment, --weight-by, the device, the method it names (over the job's base and
// server state), a recipe's files, and a progress line.
class MergeSteps final : public pipeline::Steps {
 public:
  // `weights`: --weights, parsed once by validate().
  MergeSteps(MergeOptions& o, std::vector<double> weights)
      : m_o(o), m_progress(o.verbosity, std::string(command(o)), o.inputs.size()), m_weights(std::move(weights)) {}

  std::vector<Reader*> inputs(const std::vector<Reader*>& models) override {
    m_opened = models;
    const std::vector<Reader*> tokenized = m_o.recipe && m_o.recipe->tokenizer ? tokenize(models) : models;
    if (sliced()) m_sliced = std::make_unique<SlicedInputs>(m_o.recipe->sliced, tokenized);
    const std::vector<Reader*> opened = m_sliced ? m_sliced->inputs() : tokenized;
    if (m_o.align.method == "weights") m_aligned = align_for_merge(opened, m_o.align, m_o.verbosity);
    // The plan and the engine see the aligned inputs; the output keeps input 1's own file as its template.
    const std::vector<Reader*> inputs = m_aligned.readers.empty() ? opened : m_aligned.raw();
    if (!m_o.fed.weight_by.empty() && !m_o.lora_apply) m_weights = weights_from_metadata(inputs, m_o.fed.weight_by);
    return adapters(inputs);
  }
  std::unique_ptr<Reader> base(const pipeline::Job& job) override {
    if (m_sliced) return m_sliced->take_base();
    if (m_tokenized && m_base) return m_tokenized->model(job.base);
    return pipeline::Steps::base(job);
  }
  void plan(Plan& plan, const std::vector<Reader*>&) override {
    if (!m_aligned.readers.empty()) check_aligned_plan(plan, m_aligned);
  }
  std::unique_ptr<Backend> backend(const Plan&, std::size_t) override {
    // check computes nothing on the device: it names one (-v) only when --device asks for it.
    if (m_o.use == MergeUse::check && m_o.device == Device::automatic) return make_cpu_backend();
    return make_backend(m_o.device, m_o.verbosity);
  }
  std::unique_ptr<Method> method(Backend& backend, const pipeline::Run& run, const pipeline::Job&) override {
    FederatedOptions& fed = m_o.fed.options;
    fed.weights = m_weights;
    if (fed.staleness_fn)
      fed.staleness = staleness_from_metadata(*run.base, run.inputs, m_o.fed.staleness, *fed.staleness_fn);
    if (!m_clients.empty()) return make_federated(backend, run.plan, fed, run.state.get());
    if (m_lora || m_folded) return make_weighted_mean(backend, m_weights);  // the one input, as it is
    if (task_run(m_o)) return make_task_method(backend, run.plan, m_o.task.resolve(fed, m_weights));
    if (federated_run(m_o)) return make_federated(backend, run.plan, fed, run.state.get());
    return make_weighted_mean(backend, m_weights);
  }
  void engine(Engine& engine) override { m_progress.follow(engine); }
  void chose(const pipeline::Template& templ, FormatId format) override {
    if (templ.index != 0)  // input 1 is the rule; another input is worth saying
      note(m_o.verbosity, 1,
           "template: " + m_o.inputs[templ.index] + " (input " + std::to_string(templ.index + 1) +
               "): the output keeps its structure and metadata, input 1 has none in " + codec(format).name);
  }
  std::string describe(const Method& method) override { return method_text(method) + sequence_note(m_o.seq); }
  // Returns what the run computed: the method's name, or the LoRA aggregation's.
  std::string method_text(const Method& method) const {
    if (m_folded) return "LoRA folded into " + m_o.inputs.front() + (m_lora ? " (" + m_lora->describe() + ")" : "");
    if (!m_clients.empty()) return method.describe() + ", the clients' adapters folded into " + m_o.inputs.front();
    return m_lora ? m_lora->describe() : method.describe();
  }
  void output(OutputSpec& spec, const pipeline::Run& run) override {
    if (!m_adapter_config.empty()) spec.extra_files = {{"adapter_config.json", m_adapter_config}};
    if (m_o.companions == MergeOptions::Companions::base) spec.companions = run.base.get();
    if (!m_o.recipe) return;
    spec.provenance.add("wavg_recipe", m_o.recipe->text);
    spec.extra_files = {{"mergekit_config.yml", m_o.recipe->text}};
    if (m_sliced) sliced_output(spec);
    if (m_tokenized) tokenizer_output(spec);
    if (m_o.chat_template.empty()) return;
    const bool from_base = m_o.companions == MergeOptions::Companions::base && run.base;
    std::string donor = from_base ? m_o.fed.base : m_o.inputs.front();
    std::optional<std::string> donor_config;
    if (m_tokenized) {
      donor = m_tokenized->donor();
      for (const auto& [name, text] : spec.extra_files)
        if (name == "tokenizer_config.json") donor_config = text;
      std::erase_if(spec.extra_files, [](const auto& f) { return f.first == "tokenizer_config.json"; });
    }
    for (auto& file : chat_template_files(donor, m_o.chat_template, donor_config))
      spec.extra_files.push_back(std::move(file));
  }
  void committed() override {
    m_progress.erase();
    if (m_lora)
      for (const std::string& n : m_lora->notes()) note(m_o.verbosity, 1, n);
  }

 private:
  bool sliced() const { return m_o.recipe && !m_o.recipe->sliced.inputs.empty(); }

  // The paths of the models as opened (the job's inputs).
  std::vector<std::string> opened_paths() const { return sliced() ? m_o.recipe->sliced.models() : m_o.inputs; }

  // The opened model at `path`: an input, or the base opened for a tokenizer merge.
  Reader* opened(const std::string& path) const {
    const std::vector<std::string> paths = opened_paths();
    const auto it = std::find(paths.begin(), paths.end(), path);
    return it == paths.end() ? m_base.get() : m_opened[static_cast<std::size_t>(it - paths.begin())];
  }

  // mergekit's config donor: base_model, else the first model.
  const std::string& config_donor() const {
    return m_o.recipe->base_model.empty() ? m_o.inputs.front() : m_o.recipe->base_model;
  }

  // A recipe's tokenizer merge (recipe_tokenizer.hpp): every model, the base too (opened here when it is not an
  // input), with its embeddings rebuilt to the output tokenizer.
  std::vector<Reader*> tokenize(const std::vector<Reader*>& models) {
    const std::vector<std::string> paths = opened_paths();
    std::vector<std::pair<std::string, Reader*>> all;
    if (!m_o.fed.base.empty() && !sliced()) {
      m_base = open_reader(m_o.fed.base);
      all.emplace_back(m_o.fed.base, m_base.get());
    }
    for (std::size_t i = 0; i < models.size(); ++i) all.emplace_back(paths[i], models[i]);
    m_tokenized = std::make_unique<TokenizedModels>(*m_o.recipe->tokenizer, all, m_o.recipe->base_model);
    for (const std::string& p : paths) m_tokenized_inputs.push_back(m_tokenized->model(p));
    return pipeline::raw(m_tokenized_inputs);
  }

  // The tokenizer merge's files: the donor's tokenizer, tokenizer.json written anew where tokens were added or left
  // out, and config.json's vocab_size the rebuilt row count.
  void tokenizer_output(OutputSpec& spec) const {
    if (!m_sliced) {  // the output's tensor list is the rebuilt input 1's
      spec.template_input = m_tokenized_inputs.front().get();
      spec.dropped.clear();
    }
    spec.companions = opened(m_tokenized->donor());
    for (auto& file : m_tokenized->files()) spec.extra_files.push_back(std::move(file));
    const auto config = std::find_if(spec.extra_files.begin(), spec.extra_files.end(),
                                     [](const auto& f) { return f.first == "config.json"; });
    if (config != spec.extra_files.end()) {
      config->second = with_vocab_size(config->second, m_tokenized->rows());
    } else if (const auto text = read_tokenizer_file(std::filesystem::path(config_donor()) / "config.json")) {
      spec.extra_files.emplace_back("config.json", with_vocab_size(*text, m_tokenized->rows()));
    }
  }

  // A sliced merge's output keeps the sliced input 1's tensor list; its config.json is base_model's (else the first
  // model's) with the new layer count, as mergekit's is.
  void sliced_output(OutputSpec& spec) const {
    spec.template_input = m_sliced->inputs().front();
    spec.dropped.clear();
    spec.companions = opened(config_donor());
    if (const std::string config = sliced_config(config_donor(), m_o.recipe->sliced.layers()); !config.empty())
      spec.extra_files.emplace_back("config.json", config);
  }

  // LoRA adapter folders become their aggregate (lora_merge.hpp), which the plan and the engine see as the one
  // input, taken as it is.
  std::vector<Reader*> adapters(const std::vector<Reader*>& inputs) {
    if (m_o.lora_apply) return applied(inputs);
    if (m_o.lora_extract) return extracted(inputs);
    if (!are_adapters(inputs)) {
      if (!m_o.lora.empty()) fail_usage("--lora merges PEFT adapter folders; " + inputs.front()->path() + " is none");
      return inputs;
    }
    if (m_o.align.method != "none" || !m_o.fed.base.empty() || task_run(m_o) || is_federated(m_o.fed.options))
      fail_usage("adapter folders merge by --lora's methods (exact, svd:RANK, factorwise, frozen-a) with --weights "
                 "or --weight-by, not with alignment, a base or another method");
    m_lora = aggregate_lora(inputs, m_weights, lora_merge());
    m_weights = {1.0};
    return {m_lora.get()};
  }

  // --lora's method, with the costly per-module notes only when -v shows them.
  LoraMerge lora_merge() const {
    LoraMerge how = parse_lora_merge(m_o.lora.empty() ? "exact" : m_o.lora);
    if (m_o.verbosity.verbose >= 1 && !m_o.verbosity.quiet) how.notes = LoraNotes::all;
    return how;
  }

  // --lora-apply: input 1 (the base) with the other inputs (adapters, or their aggregate) folded in.
  std::vector<Reader*> applied(const std::vector<Reader*>& inputs) {
    const std::vector<Reader*> adapters(inputs.begin() + 1, inputs.end());
    if (inputs.front()->lora_adapter() || !are_adapters(adapters))
      fail_usage("--lora-apply takes the base model first, then PEFT adapter folders");
    if (m_o.align.method != "none" || task_run(m_o))
      fail_usage("--lora-apply folds adapters (aggregated by --lora) into input 1, with --weights or --weight-by, "
                 "not with alignment or a task-vector method");
    if (!m_o.fed.weight_by.empty()) m_weights = weights_from_metadata(adapters, m_o.fed.weight_by);
    if (is_federated(m_o.fed.options)) return round(*inputs.front(), adapters);
    Reader* adapter = adapters.front();
    if (adapters.size() > 1 || !m_o.lora.empty()) {  // --lora is applied to one adapter too (svd:RANK cuts it)
      m_lora = aggregate_lora(adapters, m_weights, lora_merge());
      adapter = m_lora.get();
    }
    m_folded = fold_lora(*inputs.front(), *adapter);
    m_weights = {1.0};
    return {m_folded.get()};
  }

  // A federated round over adapters (--lora-apply with a server optimizer, a robust method, clipping, ...): each
  // adapter folded into input 1, the global model, is its client's model, and the round runs over those with input
  // 1 as its base, so the pseudo-gradient is the mean update (exactly, for LoRA) and the server state is the full
  // model's, as in any round. The next global model is written whole: an adaptive server step is not low-rank.
  std::vector<Reader*> round(Reader& global, const std::vector<Reader*>& adapters) {
    if (!m_o.lora.empty())
      fail_usage("--lora does not apply to a federated round: each client's adapter is folded into input 1 whole");
    std::vector<Reader*> clients;
    for (Reader* a : adapters) {
      m_clients.push_back(fold_lora(global, *a));
      clients.push_back(m_clients.back().get());
    }
    return clients;
  }

  // --lora-extract: input 2's difference from input 1 as a rank-R adapter (lora_extract.hpp).
  // The embedding tables' shapes from the config.json of the fine-tune's folder, else the base's, when either is a
  // Hugging Face folder with one.
  std::optional<EmbeddingShapes> model_embeddings() const {
    for (const std::string& model : {m_o.inputs.back(), m_o.inputs.front()}) {
      if (!std::filesystem::is_directory(model)) continue;
      if (const auto text = read_tokenizer_file(std::filesystem::path(model) / "config.json"))
        if (auto shapes = embedding_shapes(*text)) return shapes;
    }
    return std::nullopt;
  }

  std::vector<Reader*> extracted(const std::vector<Reader*>& inputs) {
    if (inputs.front()->lora_adapter() || inputs.back()->lora_adapter())
      fail_usage("--lora-extract takes two models, the base and its fine-tune, not adapters");
    std::unique_ptr<LoraExtract> e =
        extract_lora(*inputs.front(), *inputs.back(), m_o.lora_extract, model_embeddings());
    m_adapter_config = e->config_text();
    m_lora = std::move(e);
    m_weights = {1.0};
    return {m_lora.get()};
  }

  MergeOptions& m_o;
  std::vector<Reader*> m_opened;                            // the models as opened
  std::unique_ptr<Reader> m_base;                           // a tokenizer merge's base, opened to read its rows
  std::unique_ptr<TokenizedModels> m_tokenized;             // a tokenizer merge's output tokenizer and rows
  std::vector<std::unique_ptr<Reader>> m_tokenized_inputs;  // the opened models with their rows rebuilt
  std::unique_ptr<SlicedInputs> m_sliced;                   // a sliced merge's inputs and base, over those
  ProgressLine m_progress;
  Aligned m_aligned;
  std::vector<double> m_weights;
  std::unique_ptr<LoraAggregate> m_lora;
  std::unique_ptr<Reader> m_folded;  // --lora-apply's base with the adapter folded in
  std::vector<std::unique_ptr<Reader>> m_clients;  // a round over adapters: each folded into the global model
  std::string m_adapter_config;                    // --lora-extract's adapter_config.json
};

// Without -j or OMP_NUM_THREADS, a merge takes the cores no other program uses now (free_cores_now): on a busy
// machine a worker on a taken core waits for it, and each parallel loop waits for its slowest worker, so more
// workers than free cores were slower than -j1 (issue 43: 1.06x for the median at N = 16 with the second core busy);
// with no core free it runs as -j1 does. The plain and weighted means (no --base, robust or task method, alignment or
// GPU) with a fingerprint take at most half the cores besides, while the fingerprint's threads (one per input) run
// beside them: a mean is a few instructions per byte, bound by memory rather than by the cores, and on a small
// machine a second worker only competes with the hash threads and the main thread's reads and writes. Measured
// (README "Performance", 124M x 4 from the page cache): 2 cores, one worker 0.73 s, two 0.90 s (quiet); a 16-core
// host, 8 workers 0.61 s, 16 workers 0.62 s, 4 workers 0.66 s. Every other method computes enough per byte to use
// every free core, and without hashing two workers beat one on 2 cores. The output is the same bytes for any count;
// -vv says what was chosen.
void choose_default_threads(MergeOptions& o) {
  if (o.threads > 0 || std::getenv("OMP_NUM_THREADS") || o.device == Device::cuda) return;
  const int cores = omp_get_num_procs();
  const int free = free_cores_now();
  const bool mean = o.hash != HashAlgo::none && o.fed.options.robust.method == &default_method() &&
                    o.fed.base.empty() && o.align.method == "none";
  o.threads = mean ? std::max(1, std::min(free, cores / 2)) : free;
  note(o.verbosity, 2,
       std::to_string(o.threads) + " worker thread(s) of " + std::to_string(cores) + " cores, " +
           std::to_string(free) + " free" +
           (mean ? ": the mean is bound by memory, and the fingerprint's threads use the others" : "") +
           " (-j sets the count)");
}

// Reads the recipe (if any) and validates the options into a job; none for a recipe whose slices pass tensors
// through (run_passthrough), which only merge runs.
std::optional<pipeline::Job> make_job(MergeOptions& o) {
  std::optional<pipeline::Job> job;
  pipeline::agreed([&] {
    apply_recipe(o);
    const bool passthrough = o.recipe && !o.recipe->slices.empty();
    const bool sliced = o.recipe && !o.recipe->sliced.inputs.empty();  // slices merged by a method
    if ((passthrough || sliced) && pipeline::mpi_size() > 1)
      fail_usage("a recipe with slices runs on one process: run it without mpirun");
    if (passthrough && o.use == MergeUse::check)
      fail_usage("the recipe's slices are copied from their models, not merged: check verifies a merge by a method");
    if (passthrough) return;
    job = validate(o);
    if (sliced) job->inputs = o.recipe->sliced.models();
  });
  return job;
}

int merge(MergeOptions& o) {
  const std::optional<pipeline::Job> job = make_job(o);
  const bool passthrough = !job;
  if (passthrough)
    return run_passthrough({o.recipe->slices, o.output, o.format, o.recipe->text, o.out_dtype,
                            o.force ? Overwrite::yes : Overwrite::no, o.hash, o.verbosity});
  choose_default_threads(o);
  apply_threads(o.threads);
  MergeSteps steps(o, job->weights);
  const pipeline::Run run = pipeline::run(*job, steps);
  report(o, run.output.format_id(), run.plan, *run.method, run.inputs, steps.method_text(*run.method));
  report_division(run.division, o.verbosity);
  if (!o.eval.empty() && !o.verbosity.quiet) print_scores(o.eval, o.inputs, o.output);
  return 0;
}

}  // namespace

Verified verify_merge(MergeOptions& o) {
  const std::optional<pipeline::Job> job = make_job(o);
  MergeSteps steps(o, job->weights);
  pipeline::Run run = pipeline::verify(*job, steps);
  return {std::move(run.plan), run.method->decisions()};
}

namespace {

// Under mpirun or srun every rank runs the one merge, each a share of it (pipeline/distributed.hpp); rank 0 reports.
int run_merge(MergeOptions& o) {
  if (!pipeline::launched_by_mpi()) return merge(o);
  return pipeline::with_mpi([&] {
    if (pipeline::mpi_rank() > 0) o.verbosity = quiet_rank(o.verbosity);
    return merge(o);
  });
}

}  // namespace

void add_merge_options(CLI::App& app, MergeOptions& o) {
  const bool writes = o.use == MergeUse::merge;
  app.add_option("inputs", o.inputs,
                 writes ? "Checkpoints to merge (two or more; one or more with --base)"
                        : "Checkpoints to compare with the first one (one or more with --base)");
  app.add_option("--recipe", o.recipe_path, "Run a mergekit YAML recipe (models, base_model, merge_method, ...)")
      ->type_name("FILE.yml");
  if (writes) add_output(app, o.output, o.format, o.force);
  app.add_option("-w,--weights", o.weights, "Comma-separated weights, one per input, normalised by their sum")
      ->type_name("LIST");
  if (writes) add_written_options(app, o);
  add_plan_options(app, o.plan);
  add_federated_options(app, o.fed);
  add_task_options(app, o.task);
  add_sequence_options(app, o.seq);
  if (writes) add_eval_option(app, o.eval);
  add_align_options(app, o.align, AlignFor::merge);
  add_run_options(app, o);
  app.add_option("--lora", o.lora,
                 "How PEFT adapter folders aggregate: exact (the mean update, factors stacked; the default), "
                 "svd:RANK (it, truncated), factorwise (A and B averaged apart: not the mean update), frozen-a "
                 "(shared A, B averaged)")
      ->type_name("METHOD");
  app.add_flag("--lora-apply", o.lora_apply,
               "Fold PEFT adapters into input 1, their base (W + s*B*A; DoRA's normalised form): the adapters' "
               "aggregate by --lora when there are several; with a federated option, a round from input 1");
  app.add_option("--lora-extract", o.lora_extract,
                 "Extract a PEFT adapter of this rank from input 2 minus input 1, its base (truncated SVD of each "
                 "weight's difference)")
      ->type_name("RANK")
      ->check(CLI::PositiveNumber);
  if (writes)
    add_choice(app, "--tokenizer-source", o.companions,
               {{"base", MergeOptions::Companions::base}, {"input1", MergeOptions::Companions::input1}},
               "Folder outputs with --base: whose config.json, tokenizer and other files the output copies "
               "(mergekit's tokenizer_source)");
}

RunFn setup_merge(CLI::App& app) {
  auto o = std::make_shared<MergeOptions>();
  add_merge_options(app, *o);
  return [o] { return run_merge(*o); };
}

}  // namespace wavg::cli
