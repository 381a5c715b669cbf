// FedAvg's weights (McMahan et al., 2017): each client's model counts in proportion to its number of training
// examples, which clients record in their checkpoint's metadata (--weight-by num_examples).

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "wavg/error.hpp"
#include "wavg/federated.hpp"

namespace wavg {

std::vector<double> weights_from_metadata(const std::vector<Reader*>& inputs, const std::string& key) {
  std::vector<double> weights;
  std::vector<Problem> problems;
  double total = 0;
  for (const Reader* r : inputs) {
    const auto meta = r->metadata();
    auto it = meta.find(key);
    double w = 0;
    if (it == meta.end()) {
      problems.push_back({r->path(), "no metadata entry '" + key + "' (needed by --weight-by)"});
    } else {
      const std::string& text = it->second;
      char* end = nullptr;
      errno = 0;
      w = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(w))
        problems.push_back({r->path(), "metadata '" + key + "' = '" + text + "' is not a number (--weight-by)"});
      else if (w < 0)
        problems.push_back({r->path(), "metadata '" + key + "' = " + text + " is negative (--weight-by)"});
    }
    weights.push_back(w);
    total += w;
  }
  if (problems.empty() && !(total > 0)) {
    for (const Reader* r : inputs)
      problems.push_back({r->path(), "metadata '" + key + "' is 0 in every input: the weights sum to zero"});
  }
  if (problems.empty() && !std::isfinite(total))
    problems.push_back({inputs.front()->path(), "metadata '" + key + "': the sum of the weights overflows"});
  if (!problems.empty()) throw Error(ExitCode::runtime, std::move(problems));
  return weights;
}

}  // namespace wavg
