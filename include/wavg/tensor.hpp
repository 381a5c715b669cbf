#pragma once
// What a codec tells about one tensor: its full name, element type and shape.

#include <cstdint>
#include <string>
#include <vector>

#include "wavg/dtype.hpp"
#include "wavg/names.hpp"

namespace wavg {

using Shape = std::vector<std::uint64_t>;

// What a tensor is to the model or training run that holds it. The codec decides it from the file's own structure
// (the TF2 object graph, a PyTorch optimizer's state and param_groups, Keras's optimizer variable order, storage
// identity), never from a name alone; the plan gives each role one rule (README "Roles"): weights, buffers and
// optimizer state are combined by the method; hyper-parameters and counters follow --int-policy (the newest
// input's for a sequence); rng states are copied from the template; an alias stays an alias of the tensor it names.
enum class Role : std::uint8_t {
  unknown,          // the codec cannot tell: the plan's last-resort rule (name and dtype) decides, and -v says so
  weight,           // a parameter of the model
  buffer,           // model state not trained by gradient: batch-norm statistics, MXNet aux:, Caffe's scale blob
  optimizer_state,  // a per-parameter moment or slot (Adam's m and v, momentum)
  hyper_parameter,  // an optimizer's own scalar: learning rate, betas, decay, epsilon
  counter,          // iterations, step, global_step, save_counter, num_batches_tracked, Adam's beta^t powers
  rng,              // a random generator's state
  alias,            // a second name for another tensor's storage: TensorInfo::alias_of names it
  lora_a,           // a LoRA adapter's factor A (r x in) of one module (lora.hpp)
  lora_b,           // a LoRA adapter's factor B (out x r)
  dora_magnitude,   // a DoRA adapter's magnitude vector of one module
  saved_module,     // a whole module an adapter saves beside its factors (PEFT's modules_to_save)
  constant,         // a graph's constant that is no parameter: an ONNX shape, axes or index tensor
};

inline constexpr Named<Role> k_role_names[] = {{"unknown", Role::unknown},
                                               {"weight", Role::weight},
                                               {"buffer", Role::buffer},
                                               {"optimizer-state", Role::optimizer_state},
                                               {"hyper-parameter", Role::hyper_parameter},
                                               {"counter", Role::counter},
                                               {"rng", Role::rng},
                                               {"alias", Role::alias},
                                               {"lora-a", Role::lora_a},
                                               {"lora-b", Role::lora_b},
                                               {"dora-magnitude", Role::dora_magnitude},
                                               {"saved-module", Role::saved_module},
                                               {"constant", Role::constant}};

// How a tensor's elements hold numbers. Complex numbers (numpy's complex64 and complex128, h5py's compound {r, i},
// torch's ComplexFloat and ComplexDouble) are carried as their real and imaginary parts: `dtype` is the type of one
// part (float32 for complex64) and `shape` ends in an extra dimension of 2 (real, imaginary: how every one of those
// formats lays them out), so the plan, the engine and every method combine the parts element-wise as any float
// tensor's values, in double, each rounded once. Only the codecs and what shows a tensor to people
// (element_type_name, stored_shape) see complex numbers.
enum class Numbers : std::uint8_t { real, complex };

struct TensorInfo {
  std::string name;  // full path inside the checkpoint, e.g. model_weights/dense/dense/kernel:0
  DType dtype = DType::f32;
  Shape shape;                // empty for a scalar
  Role role = Role::unknown;  // set by the codec; unknown leaves it to the plan's last-resort rule
  bool role_by_rule = false;  // the codec chose `role` by a last-resort rule of its own, not the file's structure
  std::string alias_of{};     // role alias: the name of the tensor whose storage this one shares (listed before it)
  // The format's own type the values are decoded from when it is no dtype (a GGUF tensor's "Q8_0", read as
  // float32), else empty; messages name it where they would name the dtype.
  std::string stored_as{};
  Numbers numbers{};          // complex: dtype and shape are those of the parts (see Numbers)

  // Returns the number of elements (1 for a scalar). Readers check the product for overflow when they build it.
  std::uint64_t count() const;
  std::uint64_t bytes() const { return count() * dtype_size(dtype); }
};

// Returns what a tensor is stored as, for messages: its stored_as, else its dtype's name ("Q8_0", "float16").
std::string stored_name(const TensorInfo& t);
// Returns a tensor of complex numbers of `part`'s float type (f32 for complex64) and stored `shape`, as carried.
TensorInfo complex_tensor(std::string name, DType part, Shape shape);
// Returns the element type's name as the file stores it: dtype_name, or complex64 / complex128.
std::string element_type_name(const TensorInfo& t);
// Returns the shape as the file stores it: without the parts' dimension of a complex tensor.
Shape stored_shape(const TensorInfo& t);
// Returns the number of values per stored element: 2 for complex numbers, else 1.
inline std::uint64_t parts_per_element(const TensorInfo& t) { return t.numbers == Numbers::complex ? 2 : 1; }
// Tells whether two tensors hold numbers alike: the same dtype and kind of numbers.
inline bool same_element_type(const TensorInfo& a, const TensorInfo& b) {
  return a.dtype == b.dtype && a.numbers == b.numbers;
}

// Formats a shape the way messages and `inspect` print it: "(4, 8)", "()" for a scalar.
std::string shape_string(const Shape& shape);

// Multiplies the dimensions, or returns false when the product (in elements or bytes) overflows 64 bits.
bool checked_count(const Shape& shape, std::size_t element_size, std::uint64_t& count);

}  // namespace wavg
