// What torch.optim keeps per parameter, shared by the codecs that read its state dicts (.pt and DCP), so both class
// a key alike.

#pragma once

#include <string_view>

namespace wavg::pytorch {

// Tells whether a per-parameter optimizer state key holds a scalar that follows from the step count, a counter
// (averaging those of runs at different steps gives the value of no step): `step`; NAdam's `mu_product`, the product
// of the momentum schedule over the steps; ASGD's `eta` (lr / (1 + lambd * lr * step)^alpha) and `mu`
// (1 / max(1, step - t0)). ASGD's `ax`, an average of the parameter, is optimizer state like the moments.
inline bool is_step_scalar(std::string_view key) {
  return key == "step" || key == "mu_product" || key == "eta" || key == "mu";
}

}  // namespace wavg::pytorch
