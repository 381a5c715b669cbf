// Differential privacy, client side of the Gaussian mechanism (DP-FedAvg, McMahan et al., "Learning Differentially
// Private Recurrent Language Models", ICLR 2018): every client's update is scaled to an L2 norm of at most C over
// the whole model, so one client moves the mean of n updates by at most C / n, and noise of standard deviation
// z * C / n is then added to each coordinate of the mean (Backend::add_gaussian_noise).

#include <cmath>
#include <random>

#include "wavg/federated.hpp"

namespace wavg {

std::vector<double> clip_scales(const std::vector<double>& sum_squares, double clip) {
  std::vector<double> scales(sum_squares.size(), 1.0);
  for (std::size_t k = 0; k < scales.size(); ++k) {
    const double norm = std::sqrt(sum_squares[k]);
    if (norm > clip) scales[k] = clip / norm;  // at exactly C the update is left alone
  }
  return scales;
}

std::uint64_t random_seed() {
  std::random_device device;
  return (std::uint64_t{device()} << 32) ^ device();
}

}  // namespace wavg
