// Roles of Keras 3 optimizer variables by their place in the optimizers' lists (layout in keras_optimizer.hpp).

#include "hdf5/keras_optimizer.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace wavg::keras {

namespace {

constexpr std::string_view k_root = "optimizer/";

struct RoleAt {
  Role role = Role::optimizer_state;
  bool by_rule = false;  // the count decided, not the structure: -v lists it
};

// Every optimizer's list, by its group ("optimizer/", "optimizer/inner_optimizer/"): position N -> tensor index.
using Lists = std::map<std::string, std::map<std::size_t, std::size_t>, std::less<>>;

class Assigner {
 public:
  explicit Assigner(std::vector<TensorInfo>& tensors) : m_tensors(tensors) {
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const std::string& name = tensors[i].name;
      if (!name.starts_with(k_root)) {
        m_model_floats += name.rfind("optimizer_weights/", 0) != 0 && is_float(tensors[i].dtype);
        continue;
      }
      const auto at = name.rfind("/vars/");
      const std::string n = at == std::string::npos ? "" : name.substr(at + 6);
      if (at + 1 < k_root.size() || n.empty() || n.size() > 9 || n.find_first_not_of("0123456789") != n.npos) continue;
      m_lists[name.substr(0, at + 1)][std::stoul(n)] = i;
    }
  }

  // Gives every tensor of `group`'s list, and of the lists nested in it, its role; returns the roles by position.
  std::vector<RoleAt> assign(const std::string& group, const OptimizerConfig* config) {
    const auto& list = m_lists.find(group)->second;
    const std::size_t n = list.rbegin()->first + 1;
    std::vector<RoleAt> roles;
    if (const std::string inner = inner_of(group); !inner.empty()) {
      const auto inner_roles = assign(inner, config ? config->inner.get() : nullptr);
      if (inner_roles.size() <= n) roles = wrapper_roles(list, n, inner_roles);
    }
    if (roles.empty()) roles = plain_roles(list, n, config);
    m_assigned.insert(group);
    for (const auto& [position, index] : list) {
      m_tensors[index].role = roles[position].role;
      m_tensors[index].role_by_rule = roles[position].by_rule;
    }
    return roles;
  }

  // Gives the lists no wrapper chain from the root reached (two optimizers held side by side) the plain rule.
  void assign_rest() {
    for (const auto& [group, list] : m_lists)
      if (!m_assigned.contains(group)) assign(group, nullptr);
  }

  bool has_root() const { return m_lists.contains(k_root); }

 private:
  // Returns the one list nested directly in `group` (a wrapper's inner optimizer), or "" when there is none or more.
  std::string inner_of(const std::string& group) const {
    std::string found;
    for (const auto& [g, list] : m_lists) {
      if (g.size() <= group.size() || !g.starts_with(group) || g.find('/', group.size()) != g.size() - 1) continue;
      if (!found.empty()) return "";
      found = g;
    }
    return found;
  }

  bool float_scalar(const std::map<std::size_t, std::size_t>& list, std::size_t position) const {
    const auto it = list.find(position);
    return it != list.end() && is_float(m_tensors[it->second].dtype) && m_tensors[it->second].shape.empty();
  }

  std::vector<RoleAt> plain_roles(const std::map<std::size_t, std::size_t>& list, std::size_t n,
                                  const OptimizerConfig* config) const {
    std::vector<RoleAt> roles(n);
    roles[0].role = Role::counter;
    const bool told = config && config->rate_variable;
    // Without config.json only the count tells whether vars/1 is the rate: the slots come in equal numbers per
    // trainable variable, which the model's floats stand for.
    const bool by_count = m_model_floats > 0 && n >= 2 &&
                          ((n - 2) % m_model_floats == 0 || (n - 1) % m_model_floats != 0);
    const bool rate = told ? *config->rate_variable : by_count;
    if (float_scalar(list, 1)) roles[1] = {rate ? Role::hyper_parameter : Role::optimizer_state, !told};
    // Nadam's slots come in pairs (momentum, velocity): an odd count after its own variables leaves u_product last.
    const std::size_t own = rate ? 2 : 1;
    if (config && config->schedule_product && n > own && (n - own) % 2 == 1 && float_scalar(list, n - 1))
      roles[n - 1].role = Role::counter;
    return roles;
  }

  std::vector<RoleAt> wrapper_roles(const std::map<std::size_t, std::size_t>& list, std::size_t n,
                                    const std::vector<RoleAt>& inner) const {
    const std::size_t own = n - inner.size();
    std::vector<RoleAt> roles(n);
    for (std::size_t j = 0; j < own; ++j) {
      const auto it = list.find(j);
      const bool scalar = it != list.end() && m_tensors[it->second].shape.empty();
      roles[j].role = j == 0 || (scalar && !float_scalar(list, j)) ? Role::counter
                      : j == 1 && float_scalar(list, j)             ? Role::hyper_parameter
                      : scalar                                      ? Role::counter
                                                                    : Role::optimizer_state;
    }
    std::copy(inner.begin(), inner.end(), roles.begin() + static_cast<std::ptrdiff_t>(own));
    return roles;
  }

  std::vector<TensorInfo>& m_tensors;
  Lists m_lists;
  std::set<std::string, std::less<>> m_assigned;
  std::size_t m_model_floats = 0;
};

OptimizerConfig parse(const nlohmann::json& optimizer) {
  OptimizerConfig c;
  c.schedule_product = optimizer.value("class_name", nlohmann::json()) == "Nadam";
  const auto config = optimizer.find("config");
  if (config == optimizer.end() || !config->is_object()) return c;
  if (const auto rate = config->find("learning_rate"); rate != config->end()) c.rate_variable = rate->is_number();
  if (const auto inner = config->find("inner_optimizer"); inner != config->end() && inner->is_object())
    c.inner = std::make_shared<const OptimizerConfig>(parse(*inner));
  return c;
}

}  // namespace

std::optional<OptimizerConfig> optimizer_config(std::string_view config_json) {
  const auto config = nlohmann::json::parse(config_json, nullptr, false);
  const auto* optimizer = &config;
  for (const char* key : {"compile_config", "optimizer"}) {
    if (!optimizer->is_object() || !optimizer->contains(key)) return std::nullopt;
    optimizer = &(*optimizer)[key];
  }
  if (!optimizer->is_object()) return std::nullopt;
  return parse(*optimizer);
}

void set_keras3_optimizer_roles(std::vector<TensorInfo>& tensors, const OptimizerConfig* config) {
  Assigner assigner(tensors);
  if (assigner.has_root()) assigner.assign(std::string(k_root), config);
  assigner.assign_rest();
}

}  // namespace wavg::keras
