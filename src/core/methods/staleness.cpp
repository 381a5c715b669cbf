// Staleness weights for asynchronous aggregation (FedAsync, Xie et al. 2019; FedBuff, Nguyen et al. 2022). A
// client that started from round r_k of the global model while the server is at round R sends an update tau_k =
// R - r_k rounds old; the server counts it s(tau_k) / K, and --mix alpha scales the step:
//
//     next = base + (alpha / K) * sum_k s(tau_k) * (x_k - base)
//
// The rounds come from a numeric metadata entry (--staleness KEY) that the base and every client checkpoint carry.

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "wavg/error.hpp"
#include "wavg/federated.hpp"

namespace wavg {

namespace {

constexpr const char* k_forms = "constant, polynomial:a=A or hinge:a=A,b=B";

[[noreturn]] void bad_fn(const std::string& text, const std::string& why) {
  fail_usage("--staleness-fn '" + text + "': " + why + " (expected " + k_forms + ")");
}

// Parses "a=0.5,b=4" into the parameters `names` (each exactly once), finite and non-negative.
std::vector<double> parameters(const std::string& text, const std::string& list,
                               const std::vector<std::string>& names) {
  std::vector<double> values(names.size());
  std::vector<bool> seen(names.size(), false);
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    const std::string item = list.substr(at, comma - at);
    const std::size_t eq = item.find('=');
    std::size_t i = 0;
    while (eq != std::string::npos && i < names.size() && names[i] != item.substr(0, eq)) ++i;
    if (eq == std::string::npos || i == names.size() || seen[i])
      bad_fn(text, "'" + item + "' is not a parameter of it");
    const std::string number = item.substr(eq + 1);
    char* end = nullptr;
    const double v = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(v) || v < 0)
      bad_fn(text, names[i] + " must be a non-negative number");
    values[i] = v;
    seen[i] = true;
    at = comma + 1;
  }
  for (std::size_t i = 0; i < names.size(); ++i)
    if (!seen[i]) bad_fn(text, names[i] + " is missing");
  return values;
}

}  // namespace

StalenessFn parse_staleness_fn(const std::string& text) {
  const std::size_t colon = text.find(':');
  const std::string name = text.substr(0, colon);
  const std::string list = colon == std::string::npos ? "" : text.substr(colon + 1);
  StalenessFn fn;
  if (name == "constant") {
    if (colon != std::string::npos) bad_fn(text, "constant takes no parameters");
    fn.kind = StalenessFn::Kind::constant;
  } else if (name == "polynomial" && colon != std::string::npos) {
    fn.kind = StalenessFn::Kind::polynomial;
    fn.a = parameters(text, list, {"a"})[0];
  } else if (name == "hinge" && colon != std::string::npos) {
    fn.kind = StalenessFn::Kind::hinge;
    const auto v = parameters(text, list, {"a", "b"});
    fn.a = v[0];
    fn.b = v[1];
  } else {
    bad_fn(text, "unknown function");
  }
  return fn;
}

double staleness_weight(const StalenessFn& fn, double tau) {
  switch (fn.kind) {
    case StalenessFn::Kind::constant: return 1;
    case StalenessFn::Kind::polynomial: return std::pow(1 + tau, -fn.a);
    case StalenessFn::Kind::hinge: return tau <= fn.b ? 1 : 1 / (fn.a * (tau - fn.b) + 1);
  }
  return 1;
}

std::vector<double> staleness_from_metadata(const Reader& base, const std::vector<Reader*>& inputs,
                                            const std::string& key, const StalenessFn& fn) {
  std::vector<Problem> problems;
  auto round_of = [&](const Reader& r) {
    const std::optional<double> v = metadata_number(r, key, "--staleness", problems);
    if (v && (*v < 0 || *v != std::floor(*v) || *v > 9007199254740992.0)) {
      problems.push_back(
          {r.path(), "metadata '" + key + "' = " + r.metadata().at(key) + " is not a round number (--staleness)"});
      return std::optional<double>();
    }
    return v;
  };
  const std::optional<double> now = round_of(base);
  std::vector<double> out;
  for (const Reader* r : inputs) {
    const std::optional<double> started = round_of(*r);
    if (now && started && *started > *now)
      problems.push_back({r->path(), "metadata '" + key + "' = " + r->metadata().at(key) +
                                         " is later than the base's " + base.metadata().at(key) + " (--staleness)"});
    out.push_back(now && started ? staleness_weight(fn, *now - *started) : 0);
  }
  if (!problems.empty()) throw Error(ExitCode::runtime, std::move(problems));
  return out;
}

}  // namespace wavg
