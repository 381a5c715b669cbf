// wavg check: the validation merge does (names, shapes, dtypes, --int-policy; the base, the server state, the
// alignment and the method's own checks with merge's options), without writing anything.

#include <cstdio>

#include "cli/common.hpp"
#include "cli/merge.hpp"
#include "wavg/error.hpp"

namespace wavg::cli {

namespace {

int run_check(MergeOptions& o) {
  apply_threads(o.threads);
  const Verified v = verify_merge(o);
  const Plan& plan = v.plan;
  report_excluded(plan, o.verbosity);
  for (const std::string& line : plan.pairing) note(o.verbosity, 1, line);
  for (const std::string& d : v.decisions) note(o.verbosity, 1, d);
  for (const auto& w : plan.warnings) note(o.verbosity, 0, "warning: " + w);
  if (!plan.dropped.empty())
    note(o.verbosity, 0, std::to_string(plan.dropped.size()) + " tensor(s) missing from some inputs would be dropped");
  if (!o.verbosity.quiet)
    std::printf("ok: %zu inputs match: %zu tensors (%zu to average, %zu other)\n", o.inputs.size(), plan.entries.size(),
                plan.count(Action::average), plan.entries.size() - plan.count(Action::average));
  return 0;
}

}  // namespace

RunFn setup_check(CLI::App& app) {
  auto o = std::make_shared<MergeOptions>();
  o->use = MergeUse::check;
  add_merge_options(app, *o);
  return [o] { return run_check(*o); };
}

}  // namespace wavg::cli
