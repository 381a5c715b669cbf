// wavg barrier: test loss and accuracy along the straight line from A to B, and the barrier: the largest rise of the
// loss above the straight line between the end points' losses (Frankle et al. 2020; Ainsworth et al. 2023), and
// the largest fall of the accuracy below the line between the end points' accuracies.

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/common.hpp"
#include "cli/data_options.hpp"
#include "cli/plot.hpp"
#include "pipeline/pipeline.hpp"
#include "train/scoring.hpp"
#include "wavg/error.hpp"

namespace wavg::cli {

namespace {

struct BarrierOptions {
  std::string a, b;
  DataCli data;
  std::size_t steps = 11;
  std::string plot;
  bool json = false, force = false;
  Verbosity verbosity;
};

// The scores along the line and the barriers (index of the point where each is largest).
struct Line {
  std::vector<double> t;
  std::vector<train::Scores> s;
  double loss_barrier = 0, accuracy_barrier = 0;
  std::size_t at_loss = 0, at_accuracy = 0;
  double loss_line(std::size_t i) const { return (1 - t[i]) * s.front().loss + t[i] * s.back().loss; }
  double accuracy_line(std::size_t i) const { return (1 - t[i]) * s.front().accuracy + t[i] * s.back().accuracy; }
};

void print_table(const Line& l) {
  std::printf("t\ttest loss\taccuracy\n");
  for (std::size_t i = 0; i < l.t.size(); ++i) std::printf("%.4f\t%.6f\t%.6f\n", l.t[i], l.s[i].loss, l.s[i].accuracy);
  std::printf("barrier: loss %.6f (t = %.4f), accuracy %.6f (t = %.4f)\n", l.loss_barrier, l.t[l.at_loss],
              l.accuracy_barrier, l.t[l.at_accuracy]);
}

void print_json(const BarrierOptions& o, const Line& l) {
  nlohmann::json points = nlohmann::json::array();
  for (std::size_t i = 0; i < l.t.size(); ++i)
    points.push_back({{"t", l.t[i]}, {"test_loss", l.s[i].loss}, {"accuracy", l.s[i].accuracy}});
  const nlohmann::json out = {{"a", o.a},
                              {"b", o.b},
                              {"points", points},
                              {"barrier",
                               {{"loss", l.loss_barrier},
                                {"loss_t", l.t[l.at_loss]},
                                {"accuracy", l.accuracy_barrier},
                                {"accuracy_t", l.t[l.at_accuracy]}}}};
  std::printf("%s\n", out.dump(2).c_str());
}

// One panel: the score along the path (a line through every point), the straight line between the end points
// (dashed), the barrier (a dashed segment from that line up or down to the score, and a note), and A and B.
plot::Panel panel(const Line& l, const char* label, double train::Scores::*score, double barrier, std::size_t at) {
  plot::Panel p{"t (0 = A, 1 = B)", label, {}, {}, {}, false};
  plot::Series path{std::string(label) + " along the path", l.t, {}, plot::Style::line, {}, {}};
  for (std::size_t i = 0; i < l.t.size(); ++i) path.y.push_back(l.s[i].*score);
  const double first = l.s.front().*score, last = l.s.back().*score;
  p.series.push_back(std::move(path));
  p.series.push_back({"between the end points", {0, 1}, {first, last}, plot::Style::dashed, {}, {}});
  const double on_line = (1 - l.t[at]) * first + l.t[at] * last;
  p.series.push_back({"_barrier", {l.t[at], l.t[at]}, {on_line, l.s[at].*score}, plot::Style::dashed, {}, {}});
  char text[64];
  std::snprintf(text, sizeof text, "barrier %.4g at t = %.2f", barrier, l.t[at]);
  p.notes = {{l.t[at], l.s[at].*score, barrier > 0 ? text : "no barrier"}, {0, first, "A"}, {1, last, "B"}};
  return p;
}

plot::Figure figure(const BarrierOptions& o, const Line& l) {
  char subtitle[128];
  std::snprintf(subtitle, sizeof subtitle, "loss barrier %.6f (t = %.4f), accuracy barrier %.6f (t = %.4f)",
                l.loss_barrier, l.t[l.at_loss], l.accuracy_barrier, l.t[l.at_accuracy]);
  return {"wavg barrier: A = " + o.a + ", B = " + o.b + " on " + o.data.data,
          subtitle,
          {panel(l, "test loss", &train::Scores::loss, l.loss_barrier, l.at_loss),
           panel(l, "accuracy", &train::Scores::accuracy, l.accuracy_barrier, l.at_accuracy)}};
}

int run_barrier(const BarrierOptions& o) {
  if (o.steps < 2) fail_usage("--steps must be at least 2 (the two end points)");
  const Overwrite overwrite = o.force ? Overwrite::yes : Overwrite::no;
  if (!o.plot.empty()) pipeline::check_output(o.plot, {o.a, o.b, o.data.data}, overwrite);
  const train::Dataset test = train::load_test_split(o.data.data, o.data.label_col, o.data.test_fraction);
  const train::Mlp a = train::load_mlp(o.a, test), b = train::load_mlp(o.b, test);
  if (a.size() != b.size() || a.layers.size() != b.layers.size())
    throw Error(ExitCode::incompatible, o.b, "its layers differ from " + o.a + "'s");
  Line l{std::vector<double>(o.steps), std::vector<train::Scores>(o.steps)};
  train::Workspace ws;
  for (std::size_t i = 0; i < o.steps; ++i) {
    l.t[i] = static_cast<double>(i) / static_cast<double>(o.steps - 1);
    l.s[i] = train::evaluate(train::interpolate(a, b, l.t[i]), test, ws);
  }
  for (std::size_t i = 0; i < o.steps; ++i) {
    if (l.s[i].loss - l.loss_line(i) > l.loss_barrier) l.loss_barrier = l.s[i].loss - l.loss_line(i), l.at_loss = i;
    if (l.accuracy_line(i) - l.s[i].accuracy > l.accuracy_barrier)
      l.accuracy_barrier = l.accuracy_line(i) - l.s[i].accuracy, l.at_accuracy = i;
  }
  if (o.json)
    print_json(o, l);
  else
    print_table(l);
  if (!o.plot.empty()) plot::write(o.plot, figure(o, l), overwrite);
  return 0;
}

}  // namespace

RunFn setup_barrier(CLI::App& app) {
  auto o = std::make_shared<BarrierOptions>();
  app.add_option("a", o->a, "Checkpoint of wavg's built-in MLP at t = 0")->required();
  app.add_option("b", o->b, "Checkpoint at t = 1 (align it to A first to see what alignment changes)")->required();
  add_data_options(app, o->data);
  app.add_option("--steps", o->steps, "Points on the line, end points included")->default_str("11");
  app.add_flag("--json", o->json, "Print JSON instead of a table");
  app.add_option("--plot", o->plot, "Also draw the loss and accuracy along the line as an SVG picture")
      ->type_name("FILE.svg");
  app.add_flag("-f,--force", o->force, "Replace an existing --plot file");
  add_verbosity(app, o->verbosity);
  return [o] { return run_barrier(*o); };
}

}  // namespace wavg::cli
