#pragma once
// The summary line that leads a mismatch report, one per input that differs from input 1 in more than one way
// ("B.h5: 96 of 97 tensors differ from A.h5 (shapes); first: ..."): shared by pairing by name (plan.cpp) and by
// position (plan_order.cpp). Internal to src/core.

#include <optional>
#include <string>
#include <vector>

#include "wavg/error.hpp"
#include "wavg/format.hpp"

namespace wavg {

// Why an input's tensor differs from input 1's: a name missing, a shape or a dtype, a tensor input 1 lacks, or a
// layer that cannot pair by position (--match order).
enum class Mismatch { names, shapes, dtypes, layers, extra };

// What differs between one input and input 1, tensor by tensor, for the summary line that leads the report.
class MismatchTally {
 public:
  // Records one problem; a missing tensor ends its tensor at once, shape and dtype wait for end_tensor().
  void add(std::vector<Problem>& problems, Problem p, Mismatch why) {
    if (m_first.what.empty()) m_first = p;
    problems.push_back(std::move(p));
    ++m_lines;
    if (why == Mismatch::extra) {
      ++m_extra;
      return;
    }
    if (why == Mismatch::layers) {
      ++m_layers;
      return;
    }
    m_why[static_cast<int>(why)] = true;
    if (why == Mismatch::names)
      ++m_differ;
    else
      m_open = true;
  }
  void end_tensor() {
    m_differ += m_open;
    m_open = false;
  }
  // Returns "B.h5: 96 of 97 tensors differ from A.h5 (shapes); first: ...", or nothing when one line says it all.
  std::optional<Problem> summary(const Reader& first, const std::string& path) const {
    if (m_lines < 2) return std::nullopt;
    std::string why;
    const char* names[] = {"names", "shapes", "dtypes"};
    for (int i = 0; i < 3; ++i)
      if (m_why[i]) why += (why.empty() ? "" : ", ") + std::string(names[i]);
    std::string what;
    if (m_differ || m_extra || !m_layers) {
      what = std::to_string(m_differ) + " of " + std::to_string(first.tensors().size()) + " tensors differ from " +
             first.path() + (why.empty() ? "" : " (" + why + ")");
      if (m_extra) what += (m_differ ? ", and " : "; ") + std::to_string(m_extra) + " are not in it";
    }
    // Layers that cannot pair by position (--match order) are counted apart: they are not tensors.
    if (m_layers)
      what += what.empty() ? std::to_string(m_layers) + " layer(s) do not pair with " + first.path() + "'s"
                           : ", and " + std::to_string(m_layers) + " layer(s) do not pair with its";
    return Problem{path, what + "; first: " + m_first.what};
  }

 private:
  Problem m_first;
  std::size_t m_lines = 0, m_differ = 0, m_extra = 0, m_layers = 0;
  bool m_open = false;
  bool m_why[3] = {false, false, false};
};

// Puts each input's summary line before the details, in input order.
inline void lead_with_summaries(const std::vector<Reader*>& inputs, const std::vector<MismatchTally>& tally,
                                std::vector<Problem>& problems) {
  std::vector<Problem> lead;
  for (std::size_t k = 1; k < inputs.size(); ++k)
    if (auto line = tally[k].summary(*inputs.front(), inputs[k]->path())) lead.push_back(std::move(*line));
  problems.insert(problems.begin(), lead.begin(), lead.end());
}

}  // namespace wavg
