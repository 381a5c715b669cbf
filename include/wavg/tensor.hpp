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

  // Returns the number of elements (1 for a scalar). Readers check the product for overflow when they build it.
  std::uint64_t count() const;
  std::uint64_t bytes() const { return count() * dtype_size(dtype); }
};

// Returns what a tensor is stored as, for messages: its stored_as, else its dtype's name ("Q8_0", "float16").
std::string stored_name(const TensorInfo& t);

// Formats a shape the way messages and `inspect` print it: "(4, 8)", "()" for a scalar.
std::string shape_string(const Shape& shape);

// Multiplies the dimensions, or returns false when the product (in elements or bytes) overflows 64 bits.
bool checked_count(const Shape& shape, std::size_t element_size, std::uint64_t& count);

}  // namespace wavg
