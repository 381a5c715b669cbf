#pragma once
// --plot FILE.svg: the pictures of barrier, diff, local-sgd and soup, drawn as one self-contained SVG file (no
// scripts, no fonts or images fetched, no CSS beyond presentation attributes) that any browser or document shows.
//
// Hand-written rather than a library: Debian 12 packages no C++ library that writes SVG without a display stack
// (matplot++ drives gnuplot, PLplot and cairo pull in fonts, X and a C API of global state), and line and bar
// charts with ticks need about 300 lines. The picture is a list of panels stacked vertically, each a plot area with
// a numeric y axis, an x axis that is numeric or a list of names (bars, or points in model order), and series.
//
// Every data point is an element of its own with its values in a <title> (a browser shows it on hover), and every
// tick is a <g class="tick"> holding its line and its label, so a test can read the picture back: the ticks give
// each axis's mapping, the points' positions give their values.

#include <string>
#include <vector>

#include "wavg/atomic_file.hpp"

namespace wavg::cli::plot {

// How a series draws its points.
enum class Style { line, dashed, points, bars };
// How one point is marked: not at all, a filled dot, or a hollow ring (a candidate not taken).
enum class Mark { none, dot, ring };

struct Series {
  std::string name;          // shown in the legend; a name starting with '_' is left out of it
  std::vector<double> x, y;  // y NaN: no point (a gap in a line)
  Style style = Style::line;
  std::vector<Mark> marks;        // per point; empty: a dot on each point of a points series, none on a line
  std::vector<std::string> tips;  // per point: the text of its <title> (empty: "x, y")
};

// A labelled marker on the plot (the barrier's position).
struct Note {
  double x = 0, y = 0;
  std::string text;
};

struct Panel {
  std::string x_label, y_label;
  std::vector<std::string> categories;  // non-empty: the x axis names these, x = 0, 1, ... (bars, model order)
  std::vector<Series> series;
  std::vector<Note> notes;
  bool y_from_zero = false;  // the y axis includes 0 (bars of a distance)
};

struct Figure {
  std::string title;     // names the command and its inputs
  std::string subtitle;  // one line under it (the barrier's size, the soup's score); may be empty
  std::vector<Panel> panels;
};

// Returns the figure as an SVG document.
std::string svg(const Figure& figure);

// Writes the figure to `path` atomically (pipeline::check_output refuses a bad --plot path before the work).
void write(const std::string& path, const Figure& figure, Overwrite overwrite);

}  // namespace wavg::cli::plot
