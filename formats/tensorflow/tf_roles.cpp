// Roles of a TensorFlow checkpoint's tensors, from what the checkpoint records about its objects.
//
// TF2 (tf.train.Checkpoint, CheckpointManager, Keras model.save_weights in the TF format) saves the object graph
// it walked: node 0 is the root, every node names its children, and a variable's node lists its value under the
// attribute VARIABLE_VALUE with the checkpoint key the tensor is stored under. A key is the first path the walk
// found, so a Keras 3 model saved beside its optimizer stores its weights under the optimizer's path
// (optimizer/_trainable_variables/0/...): the key says nothing, the graph everything.
//
//   an optimizer node     one that lists slot variables (Keras 2 OptimizerV2, tf.compat.v1 optimizers), or the
//                         dependency named `optimizer` of the root or of one of its children (tf.train.Checkpoint's
//                         optimizer=, a Keras model's compiled optimizer): where an optimizer sits in the graph, not
//                         what its variables are called (a tf.Module of the model may well hold a variable `iter`)
//                         and an object an optimizer holds that has an _iterations child of its own (Keras 3's
//                         LossScaleOptimizer and its inner_optimizer, mixed precision)
//   counter               its _iterations / iter child; Keras 3 Nadam's _u_product (the running product of its
//                         momentum schedule, a function of the step); what a Keras 3 optimizer that holds another
//                         lists in its _variables besides its rate (LossScaleOptimizer's step_counter and
//                         dynamic_scale: the slots are the inner one's); the root's save_counter
//   hyper-parameter       Keras 3's _learning_rate child; an OptimizerV2's other own variables (learning_rate,
//                         beta_1, beta_2, decay: its _hyper dict)
//   optimizer-state       its slot variables, and every other variable reached only through it (Keras 3's
//                         _variables and _momentums lists)
//   weight                a variable reached from the root without passing through an optimizer, or one the
//                         optimizer lists as a trainable variable (_trainable_variables, a slot's original)
//   buffer                a model variable that an optimizer which lists its trainable variables does not list
//                         (batch-norm statistics)
//
// TF1 (tf.compat.v1.train.Saver) saves no graph of objects; its names are the variables' graph names, and
// optimizers name their slots VAR/SLOT (dense/kernel/Adam, dense/kernel/Adam_1, w/Momentum) after a variable that is
// itself saved, and their own variables beta1_power / beta2_power (Adam's beta^t, counters: averaging them gives
// the beta^t of no step); the step is global_step.

#include <deque>
#include <set>
#include <unordered_map>

#include "formats/tensorflow/tensor_bundle.pb.h"
#include "tensorflow/tensorflow.hpp"
#include "wavg/error.hpp"

namespace wavg {

namespace {

using Graph = tfproto::TrackableObjectGraph;

struct GraphRoles {
  const Graph& g;
  std::vector<Role> role;       // per node; unknown for nodes that are no variable
  std::vector<bool> optimizer;  // per node
  std::vector<bool> variable;   // per node: has a VARIABLE_VALUE attribute
  std::set<int> trainable;      // listed by an optimizer as a trainable variable
  bool lists_trainables = false;

  const Graph::TrackableObject& node(int id) const { return g.nodes(id); }
  int child(int id, const std::string& name) const {
    for (const auto& c : node(id).children())
      if (c.local_name() == name) return c.node_id();
    return -1;
  }

  // Visits every node reached from `start` without entering an optimizer node other than `start`.
  template <class Fn>
  void reach(int start, Fn fn) const {
    std::vector<bool> seen(static_cast<std::size_t>(g.nodes_size()), false);
    std::deque<int> todo{start};
    seen[static_cast<std::size_t>(start)] = true;
    while (!todo.empty()) {
      const int id = todo.front();
      todo.pop_front();
      fn(id);
      for (const auto& c : node(id).children()) {
        const auto n = static_cast<std::size_t>(c.node_id());
        if (seen[n] || optimizer[n]) continue;
        seen[n] = true;
        todo.push_back(c.node_id());
      }
    }
  }

  // Tells whether Keras 3 optimizer `o` holds another (LossScaleOptimizer's inner_optimizer).
  bool wraps(int o) const {
    for (const auto& c : node(o).children())
      if (optimizer[static_cast<std::size_t>(c.node_id())]) return true;
    return false;
  }

  // Marks the Keras 3 optimizers that optimizers hold (an object with its own _iterations), to any depth.
  void mark_inner_optimizers() {
    std::deque<int> todo;
    for (std::size_t id = 0; id < optimizer.size(); ++id)
      if (optimizer[id]) todo.push_back(static_cast<int>(id));
    while (!todo.empty()) {
      const int o = todo.front();
      todo.pop_front();
      for (const auto& c : node(o).children()) {
        const auto n = static_cast<std::size_t>(c.node_id());
        if (optimizer[n] || variable[n] || child(c.node_id(), "_iterations") < 0) continue;
        optimizer[n] = true;
        todo.push_back(c.node_id());
      }
    }
  }

  void set(int id, Role r) {
    if (id >= 0 && variable[static_cast<std::size_t>(id)]) role[static_cast<std::size_t>(id)] = r;
  }

  void optimizer_roles(int o) {
    // What only the optimizer reaches is its state, unless named below.
    reach(o, [&](int id) {
      if (role[static_cast<std::size_t>(id)] == Role::unknown) set(id, Role::optimizer_state);
    });
    for (const auto& s : node(o).slot_variables()) {
      set(s.slot_variable_node_id(), Role::optimizer_state);
      trainable.insert(s.original_variable_node_id());
    }
    if (const int list = child(o, "_trainable_variables"); list >= 0) {
      lists_trainables = true;
      for (const auto& c : node(list).children()) trainable.insert(c.node_id());
    }
    const bool keras3 = child(o, "_iterations") >= 0;
    if (keras3 && wraps(o))
      // A wrapper's slots are its inner optimizer's: what its own list holds besides the rate is the state of its
      // run (LossScaleOptimizer's step_counter and dynamic_scale), kept from one input like the iteration count.
      if (const int list = child(o, "_variables"); list >= 0)
        for (const auto& c : node(list).children()) set(c.node_id(), Role::counter);
    set(child(o, keras3 ? "_iterations" : "iter"), Role::counter);
    if (keras3) {
      set(child(o, "_learning_rate"), Role::hyper_parameter);
      set(child(o, "_u_product"), Role::counter);
    } else
      for (const auto& c : node(o).children())
        if (c.local_name() != "iter" && variable[static_cast<std::size_t>(c.node_id())])
          set(c.node_id(), Role::hyper_parameter);
    for (const int t : trainable) set(t, Role::weight);
  }
};

void check_graph(const Graph& g, const std::string& path) {
  const int n = g.nodes_size();
  auto bad = [&](int id) { return id < 0 || id >= n; };
  if (n == 0) fail(path, "_CHECKPOINTABLE_OBJECT_GRAPH has no root object");
  for (const auto& node : g.nodes()) {
    for (const auto& c : node.children())
      if (bad(c.node_id()))
        fail(path,
             "_CHECKPOINTABLE_OBJECT_GRAPH names object " + std::to_string(c.node_id()) + " of " + std::to_string(n));
    for (const auto& s : node.slot_variables())
      if (bad(s.original_variable_node_id()) || bad(s.slot_variable_node_id()))
        fail(path, "_CHECKPOINTABLE_OBJECT_GRAPH's slot variable names an object it does not hold");
  }
}

void set_graph_roles(std::vector<TensorInfo>& tensors, const std::string& graph_bytes, const std::string& path) {
  Graph g;
  if (!g.ParseFromString(graph_bytes)) fail(path, "_CHECKPOINTABLE_OBJECT_GRAPH is not a TrackableObjectGraph");
  check_graph(g, path);
  const auto n = static_cast<std::size_t>(g.nodes_size());
  GraphRoles r{g, std::vector<Role>(n, Role::unknown), std::vector<bool>(n, false), std::vector<bool>(n, false), {}};
  std::unordered_map<std::string, int> node_of_key;
  for (std::size_t id = 0; id < n; ++id) {
    const auto& node = g.nodes(static_cast<int>(id));
    for (const auto& a : node.attributes())
      if (a.name() == "VARIABLE_VALUE") {
        r.variable[id] = true;
        node_of_key.emplace(a.checkpoint_key(), static_cast<int>(id));
      }
    if (node.slot_variables_size() > 0) r.optimizer[id] = true;
  }
  const auto mark_optimizer_child = [&](int id) {
    if (const int o = r.child(id, "optimizer"); o > 0) r.optimizer[static_cast<std::size_t>(o)] = true;
  };
  mark_optimizer_child(0);
  for (const auto& c : g.nodes(0).children()) mark_optimizer_child(c.node_id());
  r.optimizer[0] = false;
  r.mark_inner_optimizers();
  // The model first: whatever the root reaches without passing through an optimizer.
  std::vector<bool> model(n, false);
  r.reach(0, [&](int id) { model[static_cast<std::size_t>(id)] = true; });
  for (std::size_t id = 0; id < n; ++id)
    if (model[id]) r.set(static_cast<int>(id), Role::weight);
  r.set(r.child(0, "save_counter"), Role::counter);
  for (std::size_t id = 0; id < n; ++id)
    if (r.optimizer[id]) r.optimizer_roles(static_cast<int>(id));
  if (r.lists_trainables)
    for (std::size_t id = 0; id < n; ++id)
      if (model[id] && r.role[id] == Role::weight && !r.trainable.contains(static_cast<int>(id)))
        r.role[id] = Role::buffer;
  for (TensorInfo& t : tensors)
    if (const auto it = node_of_key.find(t.name); it != node_of_key.end())
      t.role = r.role[static_cast<std::size_t>(it->second)];
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

void set_tf1_roles(std::vector<TensorInfo>& tensors) {
  std::set<std::string> names;
  for (const TensorInfo& t : tensors) names.insert(t.name);
  for (TensorInfo& t : tensors) {
    const std::string base = t.name.substr(t.name.rfind('/') + 1);
    const auto slash = t.name.rfind('/');
    // An EMA shadow (VAR/ExponentialMovingAverage) is named like a slot but is an average of the weights, to be
    // averaged like them whatever --optimizer-state says: it is tested before the VAR/SLOT rule.
    if (t.name == "global_step" || base.rfind("beta1_power", 0) == 0 || base.rfind("beta2_power", 0) == 0)
      t.role = Role::counter;
    else if (ends_with(t.name, "/ExponentialMovingAverage"))
      t.role = Role::buffer;
    else if (slash != std::string::npos && names.contains(t.name.substr(0, slash)))
      t.role = Role::optimizer_state;
    else
      t.role = Role::weight;
  }
}

}  // namespace

void set_tensorflow_roles(std::vector<TensorInfo>& tensors, const std::string* graph_bytes, const std::string& path) {
  if (graph_bytes)
    set_graph_roles(tensors, *graph_bytes, path);
  else
    set_tf1_roles(tensors);
}

}  // namespace wavg
