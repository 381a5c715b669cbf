// FedAvg's weights (McMahan et al., 2017): each client's model counts in proportion to its number of training
// examples, which clients record in their checkpoint's metadata (--weight-by num_examples).

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "wavg/error.hpp"
#include "wavg/federated.hpp"

namespace wavg {

std::optional<double> metadata_number(const Reader& r, const std::string& key, const std::string& option,
                                      std::vector<Problem>& problems) {
  const auto meta = r.metadata();
  auto it = meta.find(key);
  if (it == meta.end()) {
    problems.push_back({r.path(), "no metadata entry '" + key + "' (needed by " + option + ")"});
    return std::nullopt;
  }
  const std::string& text = it->second;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) {
    problems.push_back({r.path(), "metadata '" + key + "' = '" + text + "' is not a number (" + option + ")"});
    return std::nullopt;
  }
  return v;
}

std::vector<double> weights_from_metadata(const std::vector<Reader*>& inputs, const std::string& key) {
  std::vector<double> weights;
  std::vector<Problem> problems;
  double total = 0;
  for (const Reader* r : inputs) {
    double w = metadata_number(*r, key, "--weight-by", problems).value_or(0);
    if (w < 0) {
      problems.push_back(
          {r->path(), "metadata '" + key + "' = " + r->metadata().at(key) + " is negative (--weight-by)"});
      w = 0;
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
