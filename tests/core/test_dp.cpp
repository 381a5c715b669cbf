// Clipping and the Gaussian mechanism.
#include <doctest/doctest.h>

#include <cmath>

#include "support/memory_checkpoint.hpp"
#include "wavg/error.hpp"
#include "wavg/philox.hpp"

using namespace wavg;
using wavg::test::run_federated;
using wavg::test::Values;

TEST_CASE("clip scales: below, at and above C") {
  // Norms 3, 4 and 5 against C = 4: only the last is clipped, to 4/5.
  CHECK(clip_scales({9, 16, 25}, 4) == std::vector<double>{1, 1, 0.8});
  CHECK(clip_scales({0}, 1) == std::vector<double>{1});
}

TEST_CASE("clipping uses the norm over the whole model") {
  // Client 1's update is (3 | 4) over two tensors: norm 5. Client 2's is (0 | 0).
  const std::vector<Values> clients{{{13}, {24}}, {{10}, {20}}};
  const Values base{{10}, {20}};
  FederatedOptions o;
  std::vector<std::string> report;
  o.privacy.clip = 5;  // at C: untouched, mean update (1.5 | 2)
  CHECK(run_federated(clients, base, o, "", &report) == Values{{11.5}, {22}});
  CHECK(report.front() == "clipped 0 of 2 updates to norm 5 (fraction 0)");
  o.privacy.clip = 6;  // above the norm: untouched
  CHECK(run_federated(clients, base, o) == Values{{11.5}, {22}});
  o.privacy.clip = 2.5;  // below: scaled by 1/2, so (1.5 | 2) / 2
  CHECK(run_federated(clients, base, o, "", &report) == Values{{10.75}, {21}});
  CHECK(report.front() == "clipped 1 of 2 updates to norm 2.5 (fraction 0.5)");
}

TEST_CASE("Philox4x32-10 matches the Random123 known-answer vectors") {
  const Philox4x32 zero = philox4x32_10({{0, 0, 0, 0}}, 0, 0);
  CHECK(zero.v[0] == 0x6627e8d5u);
  CHECK(zero.v[1] == 0xe169c58du);
  CHECK(zero.v[2] == 0xbc57ac4cu);
  CHECK(zero.v[3] == 0x9b00dbd8u);
  const Philox4x32 ones = philox4x32_10({{~0u, ~0u, ~0u, ~0u}}, ~0u, ~0u);
  CHECK(ones.v[0] == 0x408f276du);
  CHECK(ones.v[1] == 0x41c83b0eu);
  CHECK(ones.v[2] == 0xa20bc7c6u);
  CHECK(ones.v[3] == 0x6d5451fdu);
}

TEST_CASE("noise: same seed, same output; its spread is sigma = z C / n") {
  const std::size_t n = 200000;
  const std::vector<Values> clients{{std::vector<double>(n, 0.0)}, {std::vector<double>(n, 0.0)}};
  const Values base{std::vector<double>(n, 0.0)};
  FederatedOptions o;
  o.privacy.clip = 1;
  o.privacy.noise_multiplier = 4;  // sigma = 4 * 1 / 2 = 2
  o.privacy.seed = 7;
  const Values a = run_federated(clients, base, o);
  const Values b = run_federated(clients, base, o, "", nullptr, 4096);  // other block sizes: same noise
  CHECK(a == b);
  o.privacy.seed = 8;
  CHECK(run_federated(clients, base, o) != a);
  double sum = 0, sq = 0;
  for (double x : a[0]) {
    sum += x;
    sq += x * x;
  }
  const double mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
  CHECK(std::abs(mean) < 5 * 2 / std::sqrt(double(n)));  // five standard errors
  CHECK(sd == doctest::Approx(2).epsilon(0.01));
}

TEST_CASE("noise is refused without clipping, with weights, or with a robust method") {
  FederatedOptions o;
  o.has_base = true;
  o.privacy.noise_multiplier = 1;
  CHECK_THROWS_AS(validate_federated(o, 3), Error);
  o.privacy.clip = 1;
  CHECK_NOTHROW(validate_federated(o, 3));
  o.weights = {1, 2, 3};
  CHECK_THROWS_AS(validate_federated(o, 3), Error);
  o.weights.clear();
  o.robust.method = &method_row("median");
  CHECK_THROWS_AS(validate_federated(o, 3), Error);
  FederatedOptions models;  // clipping full models without a base has no update to clip
  models.privacy.clip = 1;
  CHECK_THROWS_AS(validate_federated(models, 3), Error);
}
