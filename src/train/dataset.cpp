#include "train/dataset.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>

#include "wavg/error.hpp"

namespace wavg::train {

namespace {

struct GzClose {
  void operator()(gzFile f) const { gzclose(f); }
};

// Splits one line at commas into numbers; returns false on anything that is not a finite number.
bool parse_row(const std::string& line, std::vector<double>& out) {
  out.clear();
  const char* p = line.c_str();
  while (true) {
    while (*p == ' ' || *p == '\t') ++p;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(p, &end);
    if (end == p || errno == ERANGE || !std::isfinite(v)) return false;
    out.push_back(v);
    p = end;
    while (*p == ' ' || *p == '\t' || *p == '\r') ++p;
    if (*p == '\0') return true;
    if (*p != ',') return false;
    ++p;
  }
}

}  // namespace

Dataset Dataset::subset(const std::vector<std::size_t>& index) const {
  Dataset d;
  d.features = features;
  d.classes = classes;
  d.x.reserve(index.size() * features);
  d.y.reserve(index.size());
  for (std::size_t i : index) {
    d.x.insert(d.x.end(), x.begin() + static_cast<std::ptrdiff_t>(i * features),
               x.begin() + static_cast<std::ptrdiff_t>((i + 1) * features));
    d.y.push_back(y[i]);
  }
  return d;
}

Dataset load_csv(const std::string& path, int label_col) {
  std::unique_ptr<gzFile_s, GzClose> f(gzopen(path.c_str(), "rb"));
  if (!f) fail(path, std::strerror(errno ? errno : ENOENT));
  gzbuffer(f.get(), 1 << 16);
  Dataset d;
  std::vector<double> row;
  std::string line;
  std::size_t columns = 0, line_no = 0;
  constexpr std::int32_t k_max_classes = 1 << 16;
  char buf[1 << 14];
  bool eof = false;
  while (!eof) {
    line.clear();
    while (true) {
      if (!gzgets(f.get(), buf, sizeof buf)) {
        int err = 0;
        const char* msg = gzerror(f.get(), &err);
        if (err != Z_OK && err != Z_STREAM_END) fail(path, std::string("cannot read: ") + msg);
        eof = true;
        break;
      }
      line += buf;
      if (!line.empty() && line.back() == '\n') break;
    }
    ++line_no;
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (line.empty()) continue;
    const std::string where = "line " + std::to_string(line_no) + ": ";
    if (!parse_row(line, row)) fail(path, where + "not a comma-separated list of numbers");
    if (columns == 0) {
      columns = row.size();
      if (columns < 2) fail(path, where + "needs at least one feature column and a label column");
      if (label_col >= static_cast<int>(columns) || label_col < -1)
        fail(path,
             "--label-col " + std::to_string(label_col) + ": the file has " + std::to_string(columns) + " columns");
      d.features = columns - 1;
    }
    if (row.size() != columns)
      fail(path, where + std::to_string(row.size()) + " columns, expected " + std::to_string(columns));
    const std::size_t lc = label_col < 0 ? columns - 1 : static_cast<std::size_t>(label_col);
    const double label = row[lc];
    if (label < 0 || label >= k_max_classes || label != std::floor(label))
      fail(path,
           where + "label " + std::to_string(label) + " is not a class number 0.." + std::to_string(k_max_classes - 1));
    d.y.push_back(static_cast<std::int32_t>(label));
    d.classes = std::max(d.classes, static_cast<std::size_t>(label) + 1);
    for (std::size_t c = 0; c < columns; ++c)
      if (c != lc) d.x.push_back(row[c]);
  }
  if (d.rows() < 2) fail(path, "needs at least two rows of data");
  if (d.classes < 2) fail(path, "needs at least two classes");
  return d;
}

void split_train_test(const Dataset& all, double test_fraction, Dataset& train, Dataset& test) {
  const std::vector<std::size_t> order = permutation(all.rows(), hash_key(0x5b117, all.rows()));
  const auto n_test = static_cast<std::size_t>(std::floor(test_fraction * static_cast<double>(all.rows())));
  const auto cut = order.begin() + static_cast<std::ptrdiff_t>(all.rows() - n_test);
  train = all.subset(std::vector<std::size_t>(order.begin(), cut));
  test = all.subset(std::vector<std::size_t>(cut, order.end()));
}

void scale_features(Dataset& train, Dataset& test) {
  const std::size_t f = train.features;
  std::vector<double> lo(f, INFINITY), hi(f, -INFINITY);
  for (std::size_t r = 0; r < train.rows(); ++r)
    for (std::size_t c = 0; c < f; ++c) {
      lo[c] = std::min(lo[c], train.x[r * f + c]);
      hi[c] = std::max(hi[c], train.x[r * f + c]);
    }
  for (Dataset* d : {&train, &test})
    for (std::size_t r = 0; r < d->rows(); ++r)
      for (std::size_t c = 0; c < f; ++c) {
        double& v = d->x[r * f + c];
        v = hi[c] > lo[c] ? (v - lo[c]) / (hi[c] - lo[c]) : 0.0;
      }
}

std::vector<Dataset> make_shards(const Dataset& train, std::size_t workers, Shard shard, std::uint64_t seed) {
  const std::size_t per = train.rows() / workers;
  if (per == 0)
    fail_usage(std::to_string(workers) + " workers but only " + std::to_string(train.rows()) + " training rows");
  std::vector<std::size_t> order;
  if (shard == Shard::iid) {
    order = permutation(train.rows(), hash_key(seed, 0x5a4d));
  } else {
    std::vector<std::size_t> sorted(train.rows());
    std::iota(sorted.begin(), sorted.end(), std::size_t{0});
    std::stable_sort(sorted.begin(), sorted.end(),
                     [&](std::size_t a, std::size_t b) { return train.y[a] < train.y[b]; });
    // 2*workers pieces of per/2 rows (the first worker's odd row, if any, comes from the tail), dealt at random.
    const std::size_t pieces = 2 * workers, piece = train.rows() / pieces;
    const std::vector<std::size_t> deal = permutation(pieces, hash_key(seed, 0x50b7));
    for (std::size_t w = 0; w < workers; ++w)
      for (std::size_t j = 0; j < 2; ++j) {
        const std::size_t p = deal[2 * w + j];
        order.insert(order.end(), sorted.begin() + static_cast<std::ptrdiff_t>(p * piece),
                     sorted.begin() + static_cast<std::ptrdiff_t>((p + 1) * piece));
      }
    if (piece == 0)
      fail_usage(std::to_string(workers) + " workers are too many for label-sorted shards of " +
                 std::to_string(train.rows()) + " rows");
    std::vector<Dataset> shards;
    for (std::size_t w = 0; w < workers; ++w)
      shards.push_back(
          train.subset(std::vector<std::size_t>(order.begin() + static_cast<std::ptrdiff_t>(w * 2 * piece),
                                                order.begin() + static_cast<std::ptrdiff_t>((w + 1) * 2 * piece))));
    return shards;
  }
  std::vector<Dataset> shards;
  for (std::size_t w = 0; w < workers; ++w)
    shards.push_back(
        train.subset(std::vector<std::size_t>(order.begin() + static_cast<std::ptrdiff_t>(w * per),
                                              order.begin() + static_cast<std::ptrdiff_t>((w + 1) * per))));
  return shards;
}

}  // namespace wavg::train
