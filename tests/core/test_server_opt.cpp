// Server optimizers over three rounds, the state saved to an HDF5 file and reloaded between rounds, against the
// update rules of Reddi et al. (2021) and Hsu et al. (2019) written out by hand below.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "hdf5/hdf5_reader.hpp"
#include "support/memory_checkpoint.hpp"
#include "support/temp_dir.hpp"
#include "wavg/error.hpp"

using namespace wavg;
using wavg::test::run_federated;
using wavg::test::Values;

namespace {

using wavg::test::TempDir;

// Three rounds with pseudo-gradients 1, -2 and 0.5: two clients send deltas d - 1 and d + 1 (their mean is d).
std::vector<double> three_rounds(ServerOptKind kind, const std::string& state) {
  const double deltas[] = {1, -2, 0.5};
  double global = 3;
  std::vector<double> out;
  for (double d : deltas) {
    FederatedOptions o;
    o.inputs = InputKind::deltas;
    o.server.kind = kind;
    global = run_federated({{{d - 1}}, {{d + 1}}}, {{global}}, o, state)[0][0];
    out.push_back(global);
  }
  return out;
}

std::int64_t saved_round(const std::string& path) {
  Hdf5Reader r(path);
  for (std::size_t i = 0; i < r.tensors().size(); ++i)
    if (r.tensors()[i].name == "round") {
      std::int64_t n = 0;
      r.read(i, 0, 1, &n);
      return n;
    }
  return -1;
}

}  // namespace

TEST_CASE("adam, yogi and adagrad over three rounds with the state reloaded") {
  TempDir dir;
  const double eta = 0.01, b1 = 0.9, b2 = 0.99, tau = 1e-3, d[] = {1, -2, 0.5};
  for (ServerOptKind kind : {ServerOptKind::adam, ServerOptKind::yogi, ServerOptKind::adagrad}) {
    const std::string state =
        (std::filesystem::path(dir.path()) / ("state" + std::to_string(static_cast<int>(kind)) + ".h5")).string();
    const auto got = three_rounds(kind, state);
    double m = 0, v = tau * tau, x = 3;
    for (int t = 0; t < 3; ++t) {
      m = b1 * m + (1 - b1) * d[t];
      const double g2 = d[t] * d[t];
      if (kind == ServerOptKind::adam) v = b2 * v + (1 - b2) * g2;
      if (kind == ServerOptKind::yogi) v = v - (1 - b2) * g2 * (v - g2 > 0 ? 1 : v - g2 < 0 ? -1 : 0);
      if (kind == ServerOptKind::adagrad) v = v + g2;
      x = x + eta * m / (std::sqrt(v) + tau);  // no bias correction, as in the paper
      CAPTURE(static_cast<int>(kind));
      CAPTURE(t);
      CHECK(got[static_cast<std::size_t>(t)] == doctest::Approx(x).epsilon(1e-14));
    }
    CHECK(saved_round(state) == 3);
  }
  // Round 1 of adam by hand: m = 0.1, v = 0.99e-6 + 0.01, x = 3 + 0.01 * 0.1 / (sqrt(0.01000099) + 0.001).
  const auto adam = three_rounds(ServerOptKind::adam, (std::filesystem::path(dir.path()) / "again.h5").string());
  CHECK(adam[0] == doctest::Approx(3 + 0.001 / (std::sqrt(0.01000099) + 0.001)).epsilon(1e-14));
}

TEST_CASE("sgd and momentum over three rounds") {
  TempDir dir;
  const auto sgd = three_rounds(ServerOptKind::sgd, (std::filesystem::path(dir.path()) / "sgd.h5").string());
  CHECK(sgd == std::vector<double>{4, 2, 2.5});  // lr 1: x + d
  const auto mom = three_rounds(ServerOptKind::momentum, (std::filesystem::path(dir.path()) / "mom.h5").string());
  // m = 0.9 m + d: 1, -1.1, -0.49; x: 4, 2.9, 2.41
  CHECK(mom[0] == 4);
  CHECK(mom[1] == doctest::Approx(2.9).epsilon(1e-15));
  CHECK(mom[2] == doctest::Approx(2.41).epsilon(1e-15));
}

TEST_CASE("a server state that does not match the model or the optimizer is refused") {
  TempDir dir;
  const std::string state = (std::filesystem::path(dir.path()) / "s.h5").string();
  three_rounds(ServerOptKind::momentum, state);
  FederatedOptions o;
  o.inputs = InputKind::deltas;
  o.server.kind = ServerOptKind::adam;  // adam needs v/ tensors the momentum state lacks
  try {
    run_federated({{{1}}, {{2}}}, {{0}}, o, state);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::incompatible);
    CHECK(e.problems().front().what ==
          "v/t0: missing from the server state (written for another model or another "
          "--server-opt?)");
  }
  o.server.kind = ServerOptKind::momentum;  // right optimizer, wrong shape
  CHECK_THROWS_AS(run_federated({{{1, 2}}, {{2, 3}}}, {{0, 0}}, o, state), Error);
}

TEST_CASE("server optimizer options: defaults and refusals") {
  FederatedOptions o;
  o.has_base = true;
  o.server.kind = ServerOptKind::adam;
  validate_federated(o, 2);
  CHECK(o.server.lr == 0.01);
  CHECK(o.server.beta1 == 0.9);
  CHECK(o.server.beta2 == 0.99);
  CHECK(o.server.tau == 1e-3);
  o.server.kind = ServerOptKind::momentum;
  validate_federated(o, 2);
  CHECK(o.server.lr == 1);
  o.has_base = false;
  CHECK_THROWS_AS(validate_federated(o, 2), Error);  // a server optimizer needs the global model
  o.has_base = true;
  o.beta1 = 1.0;
  CHECK_THROWS_AS(validate_federated(o, 2), Error);
}
