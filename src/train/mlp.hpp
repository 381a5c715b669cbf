#pragma once
// A multilayer perceptron classifier: dense layers with ReLU between them, softmax cross-entropy on top. Parameters
// are double and laid out as Keras 2 names and stores them (`dense/kernel` of shape (in, out), row-major;
// `dense/bias`; then `dense_1/...`), so a checkpoint of it reads like a plain Keras weights file.

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "train/dataset.hpp"
#include "wavg/tensor.hpp"

namespace wavg::train {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct Layer {
  RowMatrix kernel;  // (in, out)
  Eigen::VectorXd bias;
};

// One named tensor of a model, viewed in place.
struct ParamRef {
  TensorInfo info;
  double* data;
};

class Mlp {
 public:
  Mlp() = default;
  // Builds the layers for `inputs` features, the hidden widths and `classes` outputs, all zero.
  Mlp(std::size_t inputs, const std::vector<std::size_t>& hidden, std::size_t classes);

  // Draws Glorot-uniform kernels and zero biases from `key`.
  void init_glorot(std::uint64_t key);
  // Lists the parameters as named float64 tensors, in Keras order.
  std::vector<ParamRef> params();
  std::size_t size() const;

  std::vector<Layer> layers;
};

// Where the per-layer activations of one forward pass live, so training does not allocate per step.
struct Workspace {
  std::vector<RowMatrix> act;    // act[0] is the input batch; act[i+1] is layer i's output
  std::vector<RowMatrix> delta;  // gradient of the loss with respect to each layer's pre-activation
  RowMatrix batch;
  std::vector<std::int32_t> labels;
};

struct Scores {
  double loss = 0;      // mean softmax cross-entropy
  double accuracy = 0;  // fraction of rows whose largest output is the label
};

// Scores the model on every row of `data`.
Scores evaluate(const Mlp& model, const Dataset& data, Workspace& ws);

// Computes the gradient of the mean loss over the rows `rows` of `data` into `grad` (same shapes as the model).
void gradient(const Mlp& model, const Dataset& data, const std::vector<std::size_t>& rows, Mlp& grad, Workspace& ws);

}  // namespace wavg::train
