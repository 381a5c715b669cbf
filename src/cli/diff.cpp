// wavg diff: how far checkpoint B is from checkpoint A, per tensor and in total (L2 distance, relative distance,
// cosine similarity, largest absolute difference), as a table or as JSON.

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/common.hpp"
#include "cli/plot.hpp"
#include "pipeline/pipeline.hpp"
#include "wavg/diff.hpp"
#include "wavg/error.hpp"

namespace wavg::cli {

namespace {

struct DiffOptions {
  std::vector<std::string> inputs;
  PlanOptions plan;
  bool json = false, force = false;
  bool exit_code = false;  // --exit-code: exit 1 when A and B differ beyond --tolerance
  double tolerance = 0;
  std::string plot;
  int threads = 0;
  Verbosity verbosity;
};

// NaN and infinity have no JSON spelling: they become null.
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json sums_json(const DistanceSums& s) {
  return {{"values", s.values},
          {"l2", number(s.l2())},
          {"relative", number(s.relative())},
          {"cosine", number(s.cosine())},
          {"max_abs", number(s.max_abs)}};
}

void print_json(const DiffOptions& o, const ModelDiff& d) {
  nlohmann::json tensors = nlohmann::json::array();
  for (const TensorDiff& t : d.tensors) {
    nlohmann::json j = {{"name", t.entry.info.name},
                        {"dtype", element_type_name(t.entry.info)},
                        {"shape", stored_shape(t.entry.info)}};
    if (t.is_float)
      j.update(sums_json(t.sums));
    else
      j.update({{"values", t.entry.info.count()}, {"differing", t.differing}});
    tensors.push_back(std::move(j));
  }
  const nlohmann::json out = {
      {"a", o.inputs[0]}, {"b", o.inputs[1]}, {"tensors", tensors}, {"total", sums_json(d.total)}};
  std::printf("%s\n", out.dump(2).c_str());
}

std::string fmt(double v) {
  if (std::isnan(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void print_table(const ModelDiff& d) {
  std::size_t width = 4;
  // Names are the files' own: escaped as error lines are, so none can end its line or drive the terminal.
  for (const TensorDiff& t : d.tensors) width = std::max(width, printable(t.entry.info.name).size());
  const int w = static_cast<int>(width);
  std::printf("%-*s  %-8s  %12s  %12s  %12s  %12s  %12s\n", w, "name", "dtype", "values", "l2", "relative", "cosine",
              "max_abs");
  std::size_t floats = 0;
  for (const TensorDiff& t : d.tensors) {
    const auto& info = t.entry.info;
    if (t.is_float) {
      ++floats;
      std::printf("%-*s  %-8s  %12llu  %12s  %12s  %12s  %12s\n", w, printable(info.name).c_str(),
                  element_type_name(info).c_str(), static_cast<unsigned long long>(info.count()),
                  fmt(t.sums.l2()).c_str(), fmt(t.sums.relative()).c_str(), fmt(t.sums.cosine()).c_str(),
                  fmt(t.sums.max_abs).c_str());
    } else {
      const std::string what =
          t.differing == 0 ? "equal"
                           : std::to_string(t.differing) + " of " + std::to_string(info.count()) + " values differ";
      std::printf("%-*s  %-8s  %12llu  %s\n", w, printable(info.name).c_str(),
                  element_type_name(info).c_str(), static_cast<unsigned long long>(info.count()),
                  what.c_str());
    }
  }
  std::printf("total: %zu float tensors, %llu values: l2 %s, relative %s, cosine %s, max_abs %s\n", floats,
              static_cast<unsigned long long>(d.total.values), fmt(d.total.l2()).c_str(),
              fmt(d.total.relative()).c_str(), fmt(d.total.cosine()).c_str(), fmt(d.total.max_abs).c_str());
}

// Two panels of bars in A's order (the table's: a plain HDF5 file lists bias before kernel), one bar per float
// tensor: the relative distance and the cosine similarity.
plot::Figure figure(const DiffOptions& o, const ModelDiff& d) {
  plot::Panel relative{"tensor (in A's order)", "relative distance |B - A| / |A|", {}, {}, {}, true};
  plot::Series rel{"relative distance", {}, {}, plot::Style::bars, {}, {}};
  plot::Series cos{"cosine similarity", {}, {}, plot::Style::bars, {}, {}};
  for (const TensorDiff& t : d.tensors) {
    if (!t.is_float) continue;
    const double x = static_cast<double>(relative.categories.size());
    const std::string& name = t.entry.info.name;
    relative.categories.push_back(name);
    rel.x.push_back(x), rel.y.push_back(t.sums.relative()), rel.tips.push_back(name + ": " + fmt(t.sums.relative()));
    cos.x.push_back(x), cos.y.push_back(t.sums.cosine()), cos.tips.push_back(name + ": " + fmt(t.sums.cosine()));
  }
  plot::Panel cosine = relative;
  cosine.y_label = "cosine similarity";
  relative.series.push_back(std::move(rel));
  cosine.series.push_back(std::move(cos));
  const std::string subtitle = "whole model: relative distance " + fmt(d.total.relative()) + ", cosine " +
                               fmt(d.total.cosine()) + ", " + std::to_string(relative.categories.size()) +
                               " float tensors";
  return {"wavg diff: A = " + o.inputs[0] + ", B = " + o.inputs[1], subtitle, {relative, cosine}};
}

// Tells whether A and B differ beyond `tolerance` (--exit-code): a float tensor whose largest |B - A| exceeds it or
// is NaN (NaN equals nothing, as in h5diff), another tensor with any differing value, or a tensor only one of them
// holds (--tensors intersection).
bool differ(const ModelDiff& d, const Plan& plan, double tolerance) {
  if (!plan.dropped.empty()) return true;
  for (const TensorDiff& t : d.tensors)
    if (t.is_float ? !(t.sums.max_abs <= tolerance) : t.differing > 0) return true;
  return false;
}

int run_diff(const DiffOptions& o) {
  if (o.inputs.size() != 2) fail_usage("diff compares exactly two checkpoints (A B)");
  const Overwrite overwrite = o.force ? Overwrite::yes : Overwrite::no;
  if (!o.plot.empty()) pipeline::check_output(o.plot, o.inputs, overwrite);
  apply_threads(o.threads);
  const auto readers = pipeline::open_inputs(o.inputs);
  const std::vector<Reader*> inputs = pipeline::raw(readers);
  const Plan plan = build_plan(inputs, o.plan);
  report_excluded(plan, o.verbosity);
  const ModelDiff d = diff_models(plan, *inputs[0], *inputs[1]);
  if (o.json)
    print_json(o, d);
  else
    print_table(d);
  if (!o.plot.empty()) plot::write(o.plot, figure(o, d), overwrite);
  return o.exit_code && differ(d, plan, o.tolerance) ? 1 : 0;
}

}  // namespace

RunFn setup_diff(CLI::App& app) {
  auto o = std::make_shared<DiffOptions>();
  app.add_option("inputs", o->inputs, "The two checkpoints to compare: A, then B")->required();
  add_choice(app, "--tensors", o->plan.tensors, k_tensor_match_names,
             "A tensor missing from one input is an error (strict) or left out (intersection)");
  add_choice(app, "--match", o->plan.match, k_pairing_names,
             "Pair tensors by full name, or by position with shape and dtype checks");
  add_filters(app, o->plan);
  app.add_flag("--json", o->json, "Print JSON instead of a table");
  app.add_option("--plot", o->plot, "Also draw each tensor's relative distance and cosine as an SVG picture")
      ->type_name("FILE.svg");
  app.add_flag("-f,--force", o->force, "Replace an existing --plot file");
  // git diff --exit-code's and cmp's convention (h5diff's too), so that "did the replicas drift?" is an `if`.
  CLI::Option* exit_code =
      app.add_flag("--exit-code", o->exit_code, "Exit 1 when A and B differ (beyond --tolerance), 0 when not");
  app.add_option("--tolerance", o->tolerance,
                 "With --exit-code: float values may differ by this much, absolute (default 0: not at all)")
      ->check(CLI::NonNegativeNumber.description(""))
      ->needs(exit_code)
      ->type_name("X");
  add_threads(app, o->threads);
  add_verbosity(app, o->verbosity);
  return [o] { return run_diff(*o); };
}

}  // namespace wavg::cli
