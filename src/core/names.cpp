#include "wavg/names.hpp"

#include <algorithm>

namespace wavg {

namespace {

// The optimal-string-alignment distance: insertions, deletions, substitutions and swaps of neighbours, one each.
std::size_t distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = word.size() >= 5 ? 3 : 2;  // one more than allowed
  for (const std::string& c : candidates) {
    const std::size_t d = distance(word, c);
    if (d < best_distance) best = c, best_distance = d;
  }
  return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string best = closest(word, candidates);
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

}  // namespace wavg
