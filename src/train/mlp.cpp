// Forward and backward passes of the MLP. Eigen's own threading is switched off here: parallelism lives one level
// up (one worker per thread), so each worker's arithmetic is the same sequence of operations for any thread count.
#define EIGEN_DONT_PARALLELIZE

#include "train/mlp.hpp"

#include <cmath>

#include "wavg/error.hpp"

namespace wavg::train {

Mlp::Mlp(std::size_t inputs, const std::vector<std::size_t>& hidden, std::size_t classes) {
  std::size_t in = inputs;
  std::vector<std::size_t> widths = hidden;
  widths.push_back(classes);
  for (std::size_t out : widths) {
    Layer l;
    l.kernel = RowMatrix::Zero(static_cast<Eigen::Index>(in), static_cast<Eigen::Index>(out));
    l.bias = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(out));
    layers.push_back(std::move(l));
    in = out;
  }
}

void Mlp::init_glorot(std::uint64_t key) {
  std::uint64_t counter = 0;
  for (Layer& l : layers) {
    const double limit = std::sqrt(6.0 / static_cast<double>(l.kernel.rows() + l.kernel.cols()));
    double* w = l.kernel.data();
    for (Eigen::Index i = 0; i < l.kernel.size(); ++i) w[i] = (2 * unit_double(hash_key(key, ++counter)) - 1) * limit;
    l.bias.setZero();
  }
}

std::vector<ParamRef> Mlp::params() {
  std::vector<ParamRef> out;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::string name = i == 0 ? "dense" : "dense_" + std::to_string(i);
    Layer& l = layers[i];
    out.push_back({{name + "/kernel",
                    DType::f64,
                    {static_cast<std::uint64_t>(l.kernel.rows()), static_cast<std::uint64_t>(l.kernel.cols())}},
                   l.kernel.data()});
    out.push_back({{name + "/bias", DType::f64, {static_cast<std::uint64_t>(l.bias.size())}}, l.bias.data()});
  }
  return out;
}

std::size_t Mlp::size() const {
  std::size_t n = 0;
  for (const Layer& l : layers) n += static_cast<std::size_t>(l.kernel.size() + l.bias.size());
  return n;
}

namespace {

void load_batch(const Dataset& data, const std::vector<std::size_t>& rows, Workspace& ws) {
  const auto f = static_cast<Eigen::Index>(data.features);
  ws.batch.resize(static_cast<Eigen::Index>(rows.size()), f);
  ws.labels.resize(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    ws.batch.row(static_cast<Eigen::Index>(r)) =
        Eigen::Map<const Eigen::RowVectorXd>(data.x.data() + rows[r] * data.features, f);
    ws.labels[r] = data.y[rows[r]];
  }
}

// Runs the layers on ws.batch; leaves softmax probabilities in ws.act.back() and returns the summed loss.
double forward(const Mlp& model, Workspace& ws, std::vector<std::int32_t>* predicted) {
  const std::size_t n = model.layers.size();
  ws.act.resize(n + 1);
  ws.act[0] = ws.batch;
  for (std::size_t i = 0; i < n; ++i) {
    const Layer& l = model.layers[i];
    ws.act[i + 1].noalias() = ws.act[i] * l.kernel;
    ws.act[i + 1].rowwise() += l.bias.transpose();
    if (i + 1 < n) ws.act[i + 1] = ws.act[i + 1].cwiseMax(0.0);
  }
  RowMatrix& p = ws.act[n];
  double loss = 0;
  for (Eigen::Index r = 0; r < p.rows(); ++r) {
    Eigen::Index arg = 0;
    const double m = p.row(r).maxCoeff(&arg);
    p.row(r) = (p.row(r).array() - m).exp().matrix();
    const double z = p.row(r).sum();
    p.row(r) /= z;
    const auto label = static_cast<Eigen::Index>(ws.labels[static_cast<std::size_t>(r)]);
    loss -= std::log(std::max(p(r, label), 1e-300));
    if (predicted) predicted->push_back(static_cast<std::int32_t>(arg));
  }
  return loss;
}

}  // namespace

Scores evaluate(const Mlp& model, const Dataset& data, Workspace& ws) {
  Scores s;
  if (data.rows() == 0) return s;
  constexpr std::size_t k_chunk = 1024;
  std::vector<std::size_t> rows;
  std::vector<std::int32_t> predicted;
  double loss = 0;
  std::size_t right = 0;
  for (std::size_t start = 0; start < data.rows(); start += k_chunk) {
    rows.clear();
    for (std::size_t r = start; r < std::min(data.rows(), start + k_chunk); ++r) rows.push_back(r);
    load_batch(data, rows, ws);
    predicted.clear();
    loss += forward(model, ws, &predicted);
    for (std::size_t r = 0; r < rows.size(); ++r) right += predicted[r] == ws.labels[r];
  }
  s.loss = loss / static_cast<double>(data.rows());
  s.accuracy = static_cast<double>(right) / static_cast<double>(data.rows());
  return s;
}

void gradient(const Mlp& model, const Dataset& data, const std::vector<std::size_t>& rows, Mlp& grad, Workspace& ws) {
  WAVG_ASSERT(!rows.empty() && grad.layers.size() == model.layers.size());
  load_batch(data, rows, ws);
  forward(model, ws, nullptr);
  const std::size_t n = model.layers.size();
  ws.delta.resize(n);
  // d(mean loss)/d(logits) = (softmax - onehot) / batch.
  RowMatrix& d = ws.delta[n - 1];
  d = ws.act[n];
  for (Eigen::Index r = 0; r < d.rows(); ++r) d(r, ws.labels[static_cast<std::size_t>(r)]) -= 1.0;
  d /= static_cast<double>(rows.size());
  for (std::size_t i = n; i-- > 0;) {
    grad.layers[i].kernel.noalias() = ws.act[i].transpose() * ws.delta[i];
    grad.layers[i].bias = ws.delta[i].colwise().sum().transpose();
    if (i == 0) break;
    ws.delta[i - 1].noalias() = ws.delta[i] * model.layers[i].kernel.transpose();
    ws.delta[i - 1] = ws.delta[i - 1].cwiseProduct((ws.act[i].array() > 0.0).cast<double>().matrix());
  }
}

}  // namespace wavg::train
