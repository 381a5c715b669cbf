// wavg soup: the greedy soup of Wortsman et al. ("Model soups", ICML 2022). Score every input with --eval, sort
// by score (ties keep command-line order), start from the best, and add each next ingredient when the uniform
// average with it scores at least as well as the soup without it; write the final average. Each candidate soup
// is written to a temporary directory for the evaluation command to load, and removed after.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numeric>

#include <nlohmann/json.hpp>

#include "cli/common.hpp"
#include "cli/eval_command.hpp"
#include "cli/plot.hpp"
#include "cli/progress.hpp"
#include "pipeline/pipeline.hpp"
#include "wavg/engine.hpp"
#include "wavg/error.hpp"
#include "wavg/provenance.hpp"
#include "wavg/stdio_files.hpp"

namespace wavg::cli {

namespace {

struct SoupOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::string eval;
  std::string format;
  std::optional<DType> out_dtype;
  PlanOptions plan;
  bool force = false, json = false;
  std::string plot;
  HashAlgo hash = HashAlgo::xxh3_128;
  int threads = 0;
  Verbosity verbosity;
};

// A private directory for the candidate soups, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "wavg-soup-XXXXXX").string();
    if (!mkdtemp(pattern.data())) fail(pattern, "cannot create a temporary directory for the candidate soups");
    m_path = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return (std::filesystem::path(m_path) / name).string(); }

 private:
  std::string m_path;
};

// What a soup's averages add to the plain job: a progress line, and the record of the greedy search as the
// provenance's method.
class SoupSteps final : public pipeline::Steps {
 public:
  SoupSteps(const SoupOptions& o, std::size_t inputs, std::string record)
      : m_progress(o.verbosity, "soup", inputs), m_record(std::move(record)) {}
  void engine(Engine& engine) override { m_progress.follow(engine); }
  std::string describe(const Method& method) override { return m_record.empty() ? method.describe() : m_record; }

 private:
  ProgressLine m_progress;
  std::string m_record;
};

// Writes the uniform average of `paths` to `target` (one path: its tensors, as the mean of one).
void write_average(const SoupOptions& o, const std::vector<std::string>& paths, const pipeline::Target& target,
                   HashAlgo hash, const std::string& record) {
  SoupSteps steps(o, paths.size(), record);
  pipeline::run({paths, target, "soup", o.plan, o.out_dtype, hash, {}}, steps);
}

std::string names(const std::vector<std::string>& paths) {
  std::string s;
  for (const std::string& p : paths) {
    if (!s.empty()) s += ", ";
    s += p;
  }
  return s;
}

// What the greedy search did: each input's score, the order it tried them in, and each candidate soup's score.
struct Search {
  std::vector<double> scores;      // by command-line position
  std::vector<std::size_t> order;  // best first
  std::vector<double> candidate;   // candidate[k]: the soup with order[k] (k = 0: order[0] alone)
  std::vector<bool> taken;         // whether order[k] went into the soup
};

void print_json(const SoupOptions& o, const Search& s) {
  nlohmann::json steps = nlohmann::json::array();
  double soup = s.candidate[0];
  for (std::size_t k = 0; k < s.order.size(); ++k) {
    if (s.taken[k]) soup = s.candidate[k];
    steps.push_back({{"input", o.inputs[s.order[k]]},
                     {"score", s.scores[s.order[k]]},
                     {"with_it", s.candidate[k]},
                     {"taken", bool(s.taken[k])},
                     {"soup", soup}});
  }
  std::printf("%s\n", nlohmann::json{{"output", o.output}, {"steps", steps}, {"score", soup}}.dump(2).c_str());
}

// One panel over the inputs in the order tried: each one's score alone, the candidate soup with it (a dot when it
// was taken, a ring when not) and the soup's score as it grows.
plot::Figure figure(const SoupOptions& o, const Search& s) {
  plot::Panel p{"inputs, best first", "score (--eval)", {}, {}, {}, false};
  plot::Series alone{"input alone", {}, {}, plot::Style::points, {}, {}};
  plot::Series with{"soup with it (ring: not taken)", {}, {}, plot::Style::points, {}, {}};
  plot::Series soup{"soup so far", {}, {}, plot::Style::line, {}, {}};
  for (std::size_t k = 0; k < s.order.size(); ++k) {
    const std::string& name = o.inputs[s.order[k]];
    const double x = static_cast<double>(k), so_far = s.taken[k] ? s.candidate[k] : soup.y.back();
    p.categories.push_back(name);
    alone.x.push_back(x), alone.y.push_back(s.scores[s.order[k]]);
    alone.tips.push_back(name + " alone: " + score_text(s.scores[s.order[k]]));
    with.x.push_back(x), with.y.push_back(s.candidate[k]);
    with.marks.push_back(s.taken[k] ? plot::Mark::dot : plot::Mark::ring);
    with.tips.push_back("with " + name + ": " + score_text(s.candidate[k]) + (s.taken[k] ? ", taken" : ", not taken"));
    soup.x.push_back(x), soup.y.push_back(so_far), soup.tips.push_back("soup: " + score_text(so_far));
  }
  const double final_score = soup.y.back();
  p.series = {std::move(soup), std::move(alone), std::move(with)};  // the candidates' dots over the soup's line
  std::size_t taken = 0;
  for (bool t : s.taken) taken += t;
  // Many inputs: the axis names them, the title counts them.
  const std::string inputs = names(o.inputs);
  return {"wavg soup of " + (inputs.size() <= 60 ? inputs : std::to_string(o.inputs.size()) + " inputs"),
          "soup of " + std::to_string(taken) + " (score " + score_text(final_score) + ") into " + o.output,
          {std::move(p)}};
}

int run_soup(SoupOptions& o) {
  if (o.inputs.size() < 2) fail_usage("soup needs at least two inputs");
  // The --eval command is handed each candidate's path; standard input has none.
  if (std::find(o.inputs.begin(), o.inputs.end(), k_stdio_name) != o.inputs.end())
    fail_usage("soup cannot read an input from standard input ('-'): --eval needs each input's path");
  check_eval_command(o.eval);
  pipeline::Target target =
      pipeline::check_target({o.output, o.format, o.force ? Overwrite::yes : Overwrite::no}, o.inputs);
  if (!o.plot.empty()) pipeline::check_output(o.plot, o.inputs, o.force ? Overwrite::yes : Overwrite::no);
  const bool lines = !o.verbosity.quiet && !o.json;
  apply_threads(o.threads);
  {
    const auto readers = pipeline::open_inputs(o.inputs);  // every input readable and mergeable before any evaluation
    const std::vector<Reader*> inputs = pipeline::raw(readers);
    build_plan(inputs, pipeline::engine_plan_options(o.plan));
    pipeline::settle(target, inputs);
  }
  std::FILE* out = report_stream(o.output);

  Search search;
  std::vector<double>& scores = search.scores;
  for (const std::string& path : o.inputs) {
    scores.push_back(evaluate(o.eval, path));
    if (lines) std::fprintf(out, "score %s %s\n", score_text(scores.back()).c_str(), path.c_str());
  }
  std::vector<std::size_t>& order = search.order;
  order.resize(o.inputs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });

  ScratchDir scratch;
  // Each candidate is written as the output would be, in its format (a folder for a folder output), unhashed.
  pipeline::Target candidate_target;
  candidate_target.format = codec(target.format_id).name;
  candidate_target.format_id = target.format_id;
  candidate_target.overwrite = Overwrite::yes;
  const std::string extension = std::filesystem::path(o.output).extension().string();
  std::vector<std::string> soup{o.inputs[order[0]]};
  double best = scores[order[0]];
  search.candidate = {best};
  search.taken = {true};
  std::string record = "greedy soup (scores";
  for (std::size_t k : order) record += " " + o.inputs[k] + "=" + score_text(scores[k]);
  for (std::size_t step = 1; step < order.size(); ++step) {
    std::vector<std::string> candidate = soup;
    candidate.push_back(o.inputs[order[step]]);
    candidate_target.path = scratch.file("candidate-" + std::to_string(step) + extension);
    write_average(o, candidate, candidate_target, HashAlgo::none, "");
    const double score = evaluate(o.eval, candidate_target.path);
    std::filesystem::remove_all(output_file(target.format_id, candidate_target.path));
    const bool accepted = score >= best;
    search.candidate.push_back(score);
    search.taken.push_back(accepted);
    if (lines)
      std::fprintf(out, "with %s: %s, %s\n", candidate.back().c_str(), score_text(score).c_str(),
                   accepted ? "accepted" : "rejected");
    record += "; with " + candidate.back() + "=" + score_text(score) + (accepted ? " accepted" : " rejected");
    if (accepted) {
      soup = std::move(candidate);
      best = score;
    }
  }
  record += "; soup " + names(soup) + ")";
  write_average(o, soup, target, o.hash, record);
  if (o.json) print_json(o, search);
  if (!o.plot.empty()) plot::write(o.plot, figure(o, search), o.force ? Overwrite::yes : Overwrite::no);
  if (lines)
    std::fprintf(out, "soup of %zu: %s (score %s) into %s\n", soup.size(), names(soup).c_str(),
                 score_text(best).c_str(), o.output.c_str());
  return 0;
}

}  // namespace

RunFn setup_soup(CLI::App& app) {
  auto o = std::make_shared<SoupOptions>();
  app.add_option("inputs", o->inputs, "Checkpoints to choose from (two or more)")->required();
  add_output(app, o->output, o->format, o->force);
  app.add_option("--eval", o->eval,
                 "Evaluation command, run by /bin/sh with {model} replaced by a checkpoint's path; the last line "
                 "of its output is the score, higher is better")
      ->required();
  add_written_options(app, *o);
  app.add_flag("--json", o->json, "Print the scores and decisions as JSON instead of lines");
  app.add_option("--plot", o->plot, "Also draw the scores and the soup as it grows as an SVG picture")
      ->type_name("FILE.svg");
  add_plan_options(app, o->plan);
  add_run_options(app, *o);
  return [o] { return run_soup(*o); };
}

}  // namespace wavg::cli
