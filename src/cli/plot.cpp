// The SVG writer of plot.hpp. Layout, top to bottom: the title and subtitle, then each panel: a legend row, the
// plot area (a frame, grid lines at the y ticks, the series), the x axis's tick labels (turned 45 degrees when they
// are names) and its label. Ticks are "nice" numbers (1, 2 or 5 times a power of ten) and each axis runs from a
// tick to a tick, so both ends are labelled.

#include "cli/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "wavg/error.hpp"

namespace wavg::cli::plot {

namespace {

constexpr double k_left = 84, k_right = 28, k_min_width = 760, k_plot_height = 210, k_legend = 26;
constexpr double k_category_width = 18;    // the least room a name on the x axis gets
constexpr std::size_t k_label_chars = 40;  // longer names are cut on the axis (their points' titles keep them)
constexpr const char* k_palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                     "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

// Text from files (tensor and file names) goes into XML: markup characters escaped, control and non-ASCII bytes
// (which need not be valid UTF-8) shown as '?', so the document always parses.
std::string esc(const std::string& s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else if (u < 0x20 || u >= 0x7f)
      out += '?';
    else
      out += c;
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// "%.6g" of a value, for titles.
std::string value_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// An axis: its domain, running from the first tick to the last.
struct Axis {
  double lo = 0, hi = 1, step = 1;
  int decimals = 0;

  static Axis over(double from, double to) {
    if (!(from <= to)) from = 0, to = 1;  // no finite value at all
    if (to - from < 1e-12 * std::max(1.0, std::abs(to))) {
      const double pad = from == 0 ? 1 : std::abs(from) * 0.1;
      from -= pad, to += pad;
    }
    Axis a;
    const double rough = (to - from) / 5, power = std::pow(10, std::floor(std::log10(rough)));
    const double f = rough / power;
    a.step = (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * power;
    a.lo = std::floor(from / a.step + 1e-9) * a.step;
    a.hi = std::ceil(to / a.step - 1e-9) * a.step;
    a.decimals = std::max(0, static_cast<int>(-std::floor(std::log10(a.step) + 1e-9)));
    return a;
  }
  std::vector<double> ticks() const {
    std::vector<double> t;
    const long n = std::lround((hi - lo) / step);
    for (long i = 0; i <= n; ++i) t.push_back(lo + static_cast<double>(i) * step);
    return t;
  }
  std::string label(double v) const {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, std::abs(v) < step * 1e-9 ? 0.0 : v);
    return buf;
  }
};

// Where a panel draws: the plot area's corners and each axis's mapping into it.
struct Frame {
  double x0, y0, w, h;
  Axis xa, ya;
  std::size_t categories;
  double px(double x) const {
    if (categories) return x0 + (x + 0.5) * w / static_cast<double>(categories);
    return x0 + (x - xa.lo) / (xa.hi - xa.lo) * w;
  }
  double py(double y) const { return y0 + h - (y - ya.lo) / (ya.hi - ya.lo) * h; }
};

std::string cut(const std::string& name) {
  return name.size() <= k_label_chars ? name : name.substr(0, k_label_chars - 3) + "...";
}

// The height the x axis's labels take below the plot area.
double x_axis_height(const Panel& p) {
  if (p.categories.empty()) return 46;
  std::size_t longest = 0;
  for (const std::string& c : p.categories) longest = std::max(longest, cut(c).size());
  return 34 + static_cast<double>(longest) * 6.0 * 0.72;
}

Frame frame_of(const Panel& p, double top, double width) {
  Frame f{k_left, top + k_legend, width - k_left - k_right, k_plot_height, {}, {}, p.categories.size()};
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (const Series& s : p.series)
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      xlo = std::min(xlo, s.x[i]), xhi = std::max(xhi, s.x[i]);
      if (std::isfinite(s.y[i])) ylo = std::min(ylo, s.y[i]), yhi = std::max(yhi, s.y[i]);
    }
  for (const Note& n : p.notes) ylo = std::min(ylo, n.y), yhi = std::max(yhi, n.y);
  if (p.y_from_zero) ylo = std::min(ylo, 0.0), yhi = std::max(yhi, 0.0);
  // A point at an end of the data's range would sit on the frame's edge, half hidden whenever that end is a tick:
  // the axes reach 4% of the range beyond each end (but not past the zero bars stand on).
  const auto widen = [](double& lo, double& hi, bool keep_zero) {
    if (!(lo < hi)) return;  // one value or none: Axis::over pads it
    const double m = (hi - lo) * 0.04;
    if (!(keep_zero && lo == 0)) lo -= m;
    if (!(keep_zero && hi == 0)) hi += m;
  };
  if (p.categories.empty()) widen(xlo, xhi, false);
  widen(ylo, yhi, p.y_from_zero);
  f.xa = Axis::over(xlo, xhi);
  f.ya = Axis::over(ylo, yhi);
  return f;
}

void text(std::string& out, double x, double y, const std::string& s, const std::string& attrs = "") {
  out += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\"" + (attrs.empty() ? "" : " " + attrs) + ">" + esc(s) +
         "</text>\n";
}

void axes(std::string& out, const Panel& p, const Frame& f) {
  out += "<rect class=\"frame\" x=\"" + num(f.x0) + "\" y=\"" + num(f.y0) + "\" width=\"" + num(f.w) + "\" height=\"" +
         num(f.h) + "\" fill=\"none\" stroke=\"#444\"/>\n";
  out += "<g class=\"axis y\">\n";
  for (double t : f.ya.ticks()) {
    const std::string y = num(f.py(t));
    out += "<g class=\"tick\" data-value=\"" + f.ya.label(t) + "\"><line x1=\"" + num(f.x0 - 5) + "\" y1=\"" + y +
           "\" x2=\"" + num(f.x0 + f.w) + "\" y2=\"" + y + "\" stroke=\"#ddd\"/>";
    text(out, f.x0 - 8, f.py(t) + 4, f.ya.label(t), "text-anchor=\"end\"");
    out += "</g>\n";
  }
  text(out, 18, f.y0 + f.h / 2, p.y_label,
       "class=\"label\" text-anchor=\"middle\" transform=\"rotate(-90 18 " + num(f.y0 + f.h / 2) + ")\"");
  out += "</g>\n<g class=\"axis x\">\n";
  const double base = f.y0 + f.h;
  if (p.categories.empty()) {
    for (double t : f.xa.ticks()) {
      const std::string x = num(f.px(t));
      out += "<g class=\"tick\" data-value=\"" + f.xa.label(t) + "\"><line x1=\"" + x + "\" y1=\"" + num(base) +
             "\" x2=\"" + x + "\" y2=\"" + num(base + 5) + "\" stroke=\"#444\"/>";
      text(out, f.px(t), base + 18, f.xa.label(t), "text-anchor=\"middle\"");
      out += "</g>\n";
    }
  } else {
    for (std::size_t i = 0; i < p.categories.size(); ++i) {
      const double x = f.px(static_cast<double>(i));
      out += "<g class=\"tick\" data-value=\"" + std::to_string(i) + "\"><line x1=\"" + num(x) + "\" y1=\"" +
             num(base) + "\" x2=\"" + num(x) + "\" y2=\"" + num(base + 5) + "\" stroke=\"#444\"/>";
      text(out, x + 3, base + 12, cut(p.categories[i]),
           "font-size=\"10\" text-anchor=\"end\" transform=\"rotate(-45 " + num(x + 3) + " " + num(base + 12) + ")\"");
      out += "</g>\n";
    }
  }
  text(out, f.x0 + f.w / 2, base + x_axis_height(p) - 8, p.x_label, "class=\"label\" text-anchor=\"middle\"");
  out += "</g>\n";
}

std::string tip(const Series& s, std::size_t i) {
  if (i < s.tips.size() && !s.tips[i].empty()) return s.tips[i];
  return value_text(s.x[i]) + ", " + value_text(s.y[i]);
}

void series(std::string& out, const Panel& p, const Frame& f, const Series& s, std::size_t index) {
  const std::string color = k_palette[index % std::size(k_palette)];
  const int bar_series = static_cast<int>(
      std::count_if(p.series.begin(), p.series.end(), [](const Series& t) { return t.style == Style::bars; }));
  out += "<g class=\"series\" data-name=\"" + esc(s.name) + "\">\n";
  if (s.style == Style::bars) {
    int k = 0;  // this series' place among the bar series
    for (const Series& t : p.series) {
      if (&t == &s) break;
      k += t.style == Style::bars;
    }
    const double slot = f.w / static_cast<double>(std::max<std::size_t>(f.categories, 1)) * 0.8;
    const double bw = slot / bar_series, zero = f.py(std::clamp(0.0, f.ya.lo, f.ya.hi));
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.y[i])) continue;
      const double x = f.px(s.x[i]) - slot / 2 + bw * k, y = f.py(s.y[i]);
      out += "<rect class=\"bar\" x=\"" + num(x) + "\" y=\"" + num(std::min(y, zero)) + "\" width=\"" + num(bw * 0.9) +
             "\" height=\"" + num(std::abs(zero - y)) + "\" fill=\"" + color + "\"><title>" + esc(tip(s, i)) +
             "</title></rect>\n";
    }
    out += "</g>\n";
    return;
  }
  if (s.style != Style::points) {
    std::string d;
    bool pen_down = false;
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.y[i])) {
        pen_down = false;
        continue;
      }
      d += (pen_down ? " L" : " M") + num(f.px(s.x[i])) + " " + num(f.py(s.y[i]));
      pen_down = true;
    }
    out += "<path d=\"" + d.substr(d.empty() ? 0 : 1) + "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"2\"" +
           (s.style == Style::dashed ? " stroke-dasharray=\"6 4\"" : "") + "/>\n";
  }
  for (std::size_t i = 0; i < s.x.size(); ++i) {
    const Mark m = i < s.marks.size() ? s.marks[i] : s.style == Style::dashed ? Mark::none : Mark::dot;
    if (m == Mark::none || !std::isfinite(s.y[i])) continue;
    out += "<circle class=\"point\" cx=\"" + num(f.px(s.x[i])) + "\" cy=\"" + num(f.py(s.y[i])) + "\" r=\"" +
           (m == Mark::dot ? "3.5\" fill=\"" + color + "\"" : "5\" fill=\"white\" stroke=\"" + color + "\"") +
           "><title>" + esc(tip(s, i)) + "</title></circle>\n";
  }
  out += "</g>\n";
}

void legend(std::string& out, const Panel& p, const Frame& f) {
  double x = f.x0;
  const double y = f.y0 - 10;
  for (std::size_t i = 0; i < p.series.size(); ++i) {
    const Series& s = p.series[i];
    if (s.name.empty() || s.name[0] == '_') continue;
    const std::string color = k_palette[i % std::size(k_palette)];
    if (s.style == Style::bars)
      out += "<rect x=\"" + num(x) + "\" y=\"" + num(y - 9) + "\" width=\"12\" height=\"10\" fill=\"" + color + "\"/>";
    else
      out += "<line x1=\"" + num(x) + "\" y1=\"" + num(y - 4) + "\" x2=\"" + num(x + 16) + "\" y2=\"" + num(y - 4) +
             "\" stroke=\"" + color + "\" stroke-width=\"" + (s.style == Style::points ? "0" : "2") + "\"" +
             (s.style == Style::dashed ? " stroke-dasharray=\"4 3\"" : "") + "/><circle cx=\"" + num(x + 8) +
             "\" cy=\"" + num(y - 4) + "\" r=\"3\" fill=\"" + (s.style == Style::dashed ? "none" : color) + "\"/>";
    text(out, x + 22, y, s.name, "class=\"legend\"");
    x += 40 + static_cast<double>(s.name.size()) * 6.5;
  }
}

void notes(std::string& out, const Panel& p, const Frame& f) {
  for (const Note& n : p.notes) {
    const double x = f.px(n.x), y = f.py(n.y);
    out += "<g class=\"note\"><path d=\"M" + num(x) + " " + num(y - 6) + " L" + num(x + 5) + " " + num(y) + " L" +
           num(x) + " " + num(y + 6) + " L" + num(x - 5) + " " + num(y) + " Z\" fill=\"#222\"/>";
    const bool right_half = x > f.x0 + f.w * 0.6;
    text(out, right_half ? x - 9 : x + 9, y - 8, n.text, right_half ? "text-anchor=\"end\"" : "");
    out += "</g>\n";
  }
}

}  // namespace

std::string svg(const Figure& figure) {
  double width = k_min_width;
  for (const Panel& p : figure.panels)
    width = std::max(width, k_left + k_right + static_cast<double>(p.categories.size()) * k_category_width);
  std::string body;
  double top = figure.subtitle.empty() ? 44 : 62;
  // A title wider than the picture is cut (about 9 pixels a bold character).
  const auto fits = static_cast<std::size_t>(width / 9.5);
  const std::string title = figure.title.size() <= fits ? figure.title : figure.title.substr(0, fits - 3) + "...";
  text(body, width / 2, 26, title,
       "class=\"title\" font-size=\"16\" font-weight=\"bold\" "
       "text-anchor=\"middle\"");
  if (!figure.subtitle.empty())
    text(body, width / 2, 46, figure.subtitle, "class=\"subtitle\" text-anchor=\"middle\" fill=\"#444\"");
  for (const Panel& p : figure.panels) {
    const Frame f = frame_of(p, top, width);
    body += "<g class=\"panel\">\n";
    axes(body, p, f);
    legend(body, p, f);
    for (std::size_t i = 0; i < p.series.size(); ++i) series(body, p, f, p.series[i], i);
    notes(body, p, f);
    body += "</g>\n";
    top = f.y0 + f.h + x_axis_height(p) + 12;
  }
  const std::string w = num(width), h = num(top);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w +
         "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n<title>" + esc(figure.title) +
         "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" + body + "</svg>\n";
}

void write(const std::string& path, const Figure& figure, Overwrite overwrite) {
  AtomicFile out(path, overwrite);
  {
    std::ofstream file(out.tmp_path(), std::ios::binary | std::ios::trunc);
    file << svg(figure);
    file.flush();
    if (!file) fail(path, "cannot write");
  }
  out.commit();
}

}  // namespace wavg::cli::plot
