// Reading a mergekit YAML recipe (recipe.hpp) with yaml-cpp. mergekit's own model (mergekit/config.py) is followed:
// a parameter setting is a number, a boolean, a gradient (a list of numbers), or conditions ({filter, value}, or a
// list of them); models[i].parameters come before the global parameters. Methods take the parameters mergekit's
// method defines; one that a method does not use is refused rather than ignored, since a recipe that says more
// than the merge does is a recipe the user misread.

#include "cli/recipe.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "wavg/error.hpp"
#include "wavg/method_spec.hpp"

namespace wavg::cli {

namespace {

// The keys a method's row takes in a recipe: every one in `parameters`, the per-model ones in models[i].parameters.
std::set<std::string> keys(const MethodSpec& row, bool per_model_only) {
  std::set<std::string> out;
  for (const ParamSpec& p : row.params)
    if (!p.key.empty() && (!per_model_only || p.scope == Scope::per_model)) out.emplace(p.key);
  return out;
}

// mergekit's methods and keys that wavg knows of but does not run.
const std::set<std::string> k_other_methods{"passthrough", "ram"};
const std::set<std::string> k_keys{"models", "slices",    "base_model",       "merge_method", "parameters",
                                   "dtype",  "out_dtype", "tokenizer_source", "chat_template"};
const std::set<std::string> k_other_keys{"modules", "tokenizer"};
// The templates mergekit ships as files (mergekit/_data/chat_templates), which wavg does not carry.
const std::set<std::string> k_mergekit_templates{"alpaca", "chatml", "exaone", "llama3", "mistral"};

class Reading {
 public:
  explicit Reading(std::string path) : m_path(std::move(path)) {}

  [[noreturn]] void refuse(const std::string& what) const { throw Error(ExitCode::usage, m_path, what); }

  std::string text(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) refuse(key + " must be a string");
    return n.Scalar();
  }

  double number(const YAML::Node& n, const std::string& key) const {
    if (n.IsScalar()) {
      const std::string& s = n.Scalar();
      if (s == "true" || s == "True") return 1;
      if (s == "false" || s == "False") return 0;
      double v = 0;
      if (YAML::convert<double>::decode(n, v) && std::isfinite(v)) return v;
    }
    refuse(key + " is not a finite number");
  }

  std::vector<double> numbers(const YAML::Node& n, const std::string& key) const {
    if (n.IsScalar()) return {number(n, key)};
    if (!n.IsSequence() || n.size() == 0) refuse(key + " must be a number or a list of numbers (a gradient)");
    if (n.size() > k_max_gradient)
      refuse(key + " is a gradient of " + std::to_string(n.size()) + " values; wavg reads at most " +
             std::to_string(k_max_gradient) + " (one per layer is the most a gradient needs)");
    std::vector<double> v;
    for (std::size_t i = 0; i < n.size(); ++i) v.push_back(number(n[i], key + "[" + std::to_string(i) + "]"));
    return v;
  }

  ParamCondition condition(const YAML::Node& n, const std::string& key) const {
    ParamCondition c;
    for (const auto& kv : n) {
      const std::string k = text(kv.first, key + " key");
      if (k == "filter")
        c.filter = text(kv.second, key + ".filter");
      else if (k == "value")
        c.values = numbers(kv.second, key + ".value");
      else
        refuse(key + ": unknown key '" + k + "' (a condition has filter and value)");
    }
    if (c.values.empty()) refuse(key + ": a condition needs a value");
    return c;
  }

  ParamSetting setting(const YAML::Node& n, const std::string& key) const {
    if (n.IsMap()) return {condition(n, key)};
    if (n.IsSequence() && n.size() > 0 && n[0].IsMap()) {
      ParamSetting s;
      for (std::size_t i = 0; i < n.size(); ++i) {
        if (!n[i].IsMap()) refuse(key + ": mixes conditions ({filter, value}) and numbers");
        s.push_back(condition(n[i], key + "[" + std::to_string(i) + "]"));
      }
      return s;
    }
    return {ParamCondition{"", numbers(n, key)}};
  }

  std::map<std::string, ParamSetting> parameters(const YAML::Node& n, const std::string& where,
                                                 const std::set<std::string>& allowed,
                                                 const std::string& method) const {
    std::map<std::string, ParamSetting> out;
    if (!n || n.IsNull()) return out;
    if (!n.IsMap()) refuse(where + " must be a mapping of parameter names to values");
    for (const auto& kv : n) {
      const std::string name = text(kv.first, where + " key");
      if (!allowed.count(name))
        refuse(where + ": parameter '" + name + "' does not apply to merge_method " + method +
               " (it takes: " + join(allowed) + ")");
      out[name] = setting(kv.second, where + "." + name);
    }
    return out;
  }

  static std::string join(const std::set<std::string>& names) {
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
    return s.empty() ? "none" : s;
  }

 private:
  std::string m_path;
};

// Checks every anchor of a parameter's settings against its range.
void check_range(const Reading& r, const TensorValues& v, const ParamSpec& p) {
  const std::string name(p.key);
  auto check = [&](const ParamSetting& s) {
    for (const ParamCondition& c : s)
      for (double x : c.values)
        if (const std::string problem = range_problem(p, name, x); !problem.empty()) r.refuse(problem);
  };
  if (const auto it = v.global.find(name); it != v.global.end()) check(it->second);
  for (const auto& m : v.per_input)
    if (const auto it = m.find(name); it != m.end()) check(it->second);
}

// The value a plain scalar setting gives, if it is one.
std::optional<double> scalar(const std::map<std::string, ParamSetting>& m, const std::string& name) {
  const auto it = m.find(name);
  if (it == m.end() || it->second.size() != 1 || !it->second[0].filter.empty() || it->second[0].values.size() != 1)
    return std::nullopt;
  return it->second[0].values[0];
}

// out_dtype, else dtype: wavg computes in double either way.
std::optional<DType> dtypes(const Reading& r, const YAML::Node& doc) {
  std::optional<DType> out;
  for (const char* key : {"dtype", "out_dtype"})
    if (doc[key]) {
      const std::string d = r.text(doc[key], key);
      const auto dt = dtype_from_name(d);
      if (!dt || !is_float(*dt))
        r.refuse(std::string(key) + " '" + d + "' is not float16, bfloat16, float32 or float64");
      out = dt;
    }
  return out;
}

// chat_template: auto, or a Jinja text; mergekit's rules tell a template file's name from a text.
std::optional<std::string> chat_template(const Reading& r, const YAML::Node& doc) {
  if (!doc["chat_template"]) return std::nullopt;
  const std::string t = r.text(doc["chat_template"], "chat_template");
  if (t == "auto") return t;
  const bool name = t.size() < 256 && t.find('\n') == std::string::npos && t.find('{') == std::string::npos;
  if (name && k_mergekit_templates.count(t))
    r.refuse("chat_template '" + t +
             "' names one of mergekit's template files, which wavg does not carry: give "
             "the Jinja text itself (chat_template: |) or auto");
  if (t.size() < 20 || t.find('{') == std::string::npos)
    r.refuse("chat_template '" + t + "' is neither auto nor a Jinja template");
  return t;
}

// A passthrough frankenmerge: slices, each of one source {model, layer_range: [first, last]}.
void read_slices(const Reading& r, const YAML::Node& doc, const std::string& method, Recipe& out) {
  if (method != "passthrough") r.refuse("slices with merge_method " + method + " are not supported by wavg yet");
  if (doc["models"] || doc["base_model"] || doc["parameters"] || doc["tokenizer_source"] || doc["chat_template"])
    r.refuse(
        "merge_method passthrough takes slices only (no models, base_model, parameters, tokenizer_source, "
        "chat_template)");
  const YAML::Node slices = doc["slices"];
  if (!slices || !slices.IsSequence() || slices.size() == 0) r.refuse("merge_method passthrough needs slices");
  for (std::size_t i = 0; i < slices.size(); ++i) {
    const std::string where = "slices[" + std::to_string(i) + "]";
    const YAML::Node s = slices[i];
    if (!s.IsMap() || s.size() != 1 || !s["sources"] || !s["sources"].IsSequence() || s["sources"].size() != 1)
      r.refuse(where + " must hold sources: one {model, layer_range} (passthrough copies one model's layers)");
    const YAML::Node src = s["sources"][0];
    if (!src.IsMap()) r.refuse(where + " needs model and layer_range: [first, last]");
    for (const auto& kv : src) {
      const std::string key = r.text(kv.first, where + " key");
      if (key != "model" && key != "layer_range")
        r.refuse(where + ": unknown key '" + key + "' (a source has model and layer_range)");
    }
    if (!src["model"] || !src["layer_range"] || !src["layer_range"].IsSequence() || src["layer_range"].size() != 2)
      r.refuse(where + " needs model and layer_range: [first, last]");
    Slice slice{r.text(src["model"], where + ".model"), 0, 0};
    const double a = r.number(src["layer_range"][0], where + ".layer_range");
    const double b = r.number(src["layer_range"][1], where + ".layer_range");
    if (a != std::floor(a) || b != std::floor(b) || a < 0 || b <= a || b > 1e6)
      r.refuse(where + ".layer_range must be two whole numbers first < last");
    slice.first = static_cast<int>(a);
    slice.last = static_cast<int>(b);
    out.slices.push_back(slice);
  }
}

}  // namespace

bool looks_like_recipe(const std::string& path) {
  const auto ends = [&](const char* ext) {
    const std::string e(ext);
    return path.size() > e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  return ends(".yml") || ends(".yaml");
}

namespace {

Recipe read_document(const Reading& r, const std::string& path) {
  Recipe out;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ExitCode::runtime, path, "cannot open the recipe");
  out.text.resize(k_max_recipe_bytes + 1);
  in.read(out.text.data(), static_cast<std::streamsize>(out.text.size()));
  if (in.bad()) throw Error(ExitCode::runtime, path, "cannot read the recipe");
  out.text.resize(static_cast<std::size_t>(in.gcount()));
  // yaml-cpp's nodes take about 100 bytes of memory per byte of YAML: a 5 MB recipe took 493 MB and 7.8 s.
  if (out.text.size() > k_max_recipe_bytes)
    r.refuse("the recipe is larger than " + std::to_string(k_max_recipe_bytes / 1024) +
             " KiB, the most wavg reads (a mergekit recipe is a few KiB)");
  YAML::Node doc;
  try {
    doc = YAML::Load(out.text);
  } catch (const YAML::Exception& e) {
    r.refuse("not valid YAML: " + e.msg + " (line " + std::to_string(e.mark.line + 1) + ")");
  }
  if (!doc.IsMap()) r.refuse("a mergekit recipe is a mapping (models, merge_method, ...)");
  for (const auto& kv : doc) {
    const std::string key = r.text(kv.first, "a key");
    if (key == "int8_mask") {  // mergekit ignores it there too; in a method's parameters it is the row's flag
      out.int8_mask = r.number(kv.second, key) != 0;
      continue;
    }
    if (k_other_keys.count(key)) r.refuse("mergekit's '" + key + "' is not supported by wavg merge --recipe");
    if (!k_keys.count(key)) r.refuse("unknown key '" + key + "' (wavg reads: " + Reading::join(k_keys) + ")");
  }
  if (!doc["merge_method"]) r.refuse("no merge_method");
  const std::string name = r.text(doc["merge_method"], "merge_method");
  out.out_dtype = dtypes(r, doc);
  out.chat_template = chat_template(r, doc);
  if (doc["slices"] || name == "passthrough") {
    read_slices(r, doc, name, out);
    return out;
  }
  const MethodSpec* row = find_mergekit_method(name);
  if (!row && k_other_methods.count(name)) r.refuse("merge_method " + name + " is not supported by wavg yet");
  if (!row) r.refuse("merge_method '" + name + "' is not one of mergekit's methods wavg runs");
  out.method = row->id;
  out.linear = row->linear;
  const std::set<std::string> global = keys(*row, false), per_model = keys(*row, true);

  const std::string base = doc["base_model"] ? r.text(doc["base_model"], "base_model") : "";
  if (!doc["models"] || !doc["models"].IsSequence() || doc["models"].size() == 0)
    r.refuse("models must be a list of {model, parameters}");
  out.values = std::make_shared<TensorValues>();
  out.values->global = r.parameters(doc["parameters"], "parameters", global, name);
  for (std::size_t i = 0; i < doc["models"].size(); ++i) {
    const YAML::Node m = doc["models"][i];
    const std::string where = "models[" + std::to_string(i) + "]";
    if (!m.IsMap() || !m["model"]) r.refuse(where + " must be a mapping with a model");
    for (const auto& kv : m) {
      const std::string key = r.text(kv.first, where + " key");
      if (key != "model" && key != "parameters")
        r.refuse(where + ": unknown key '" + key + "' (a model has model and parameters)");
    }
    const std::string model = r.text(m["model"], where + ".model");
    if (!base.empty() && model == base) {  // the base's own parameters do not enter the merge (mergekit)
      continue;
    }
    out.inputs.push_back(model);
    out.values->per_input.push_back(r.parameters(m["parameters"], where + ".parameters", per_model, name));
  }
  for (const ParamSpec& p : row->params)
    if (p.need == Need::recipe || p.need == Need::always) out.values->required.emplace(p.key);
  out.values->source = path;
  const TensorValues& v = *out.values;
  // These switch a step of the method on or off for the whole merge in wavg; mergekit resolves them per tensor,
  // so a filtered or graded setting would be applied where the recipe did not ask for it: refused instead.
  for (const ParamSpec& p : row->params) {
    const std::string key(p.key);
    if (p.ranged) check_range(r, v, p);
    if (!p.flag) continue;
    // These switch a step of the method on or off for the whole merge in wavg; mergekit resolves them per tensor,
    // so a filtered or graded setting would be applied where the recipe did not ask for it: refused instead.
    if (v.global.count(key) && !scalar(v.global, key))
      r.refuse("parameters." + key +
               ": wavg takes one value for the whole merge here (a number or true/false), not filters or a gradient");
    if (p.runs_only && v.names(key) && (scalar(v.global, key).value_or(0) != 0) != *p.runs_only)
      r.refuse(key + (*p.runs_only ? ": false" : ": true") +
               (p.unsupported.empty() ? "" : " (" + std::string(p.unsupported) + ")") + " is not supported by wavg");
  }

  // The scalars merge's own options carry: what a plain number gives, else mergekit's default.
  for (std::size_t k = 0; k < out.inputs.size(); ++k) {
    std::optional<double> w = scalar(v.per_input[k], "weight");
    if (!w) w = scalar(v.global, "weight");
    const bool weighted = per_model.count("weight") > 0;
    if (weighted && !w && !v.per_input[k].count("weight") && !v.global.count("weight"))
      r.refuse("models[" + std::to_string(k) + "] (" + out.inputs[k] + "): no weight; merge_method " + name +
               " needs one for every model");
    if (weighted) out.weights.push_back(w.value_or(1.0));
  }
  for (const ParamSpec& p : row->params) {
    if (p.flag || p.option.empty() || p.key == "weight") continue;
    const std::string key(p.key);
    if (const std::optional<double> x = scalar(v.global, key))
      out.params[key] = *x;
    else if (p.need == Need::option && p.has_fallback)  // merge's option is required, a recipe keeps mergekit's
      out.params[key] = p.fallback;
  }
  if (v.names("normalize"))
    out.normalize = scalar(v.global, "normalize").value_or(1) != 0;
  else if (out.linear)
    out.normalize = row->normalize_default;  // mergekit's linear normalises by default
  if (v.names("normalize_weights")) out.normalize = scalar(v.global, "normalize_weights").value_or(1) != 0;
  if (v.names("rescale"))
    out.rescale = scalar(v.global, "rescale").value_or(1) != 0 ? DareRescale::l1 : DareRescale::none;

  if (row->base_first) {
    if (base.empty()) r.refuse("merge_method slerp needs base_model (the model at t = 0)");
    if (out.inputs.size() != 1)
      r.refuse("merge_method slerp takes the base model and one other, got " + std::to_string(out.inputs.size()) +
               " others");
    if (!v.global.count("t")) r.refuse("merge_method slerp needs parameters.t");
    out.inputs.insert(out.inputs.begin(), base);
    out.values->per_input.insert(out.values->per_input.begin(), std::map<std::string, ParamSetting>{});
  } else if (row->base == BaseUse::none) {
    if (!base.empty()) r.refuse("merge_method " + name + " takes no base_model");
  } else if (row->base == BaseUse::optional) {
    if (row->max_inputs == 2 && out.inputs.size() != 2)
      r.refuse("merge_method " + name + " takes two models besides the base, got " + std::to_string(out.inputs.size()));
    out.base = base;  // optional: with one, they work on task vectors
  } else {
    if (base.empty()) r.refuse("merge_method " + name + " works on task vectors: it needs base_model");
    out.base = base;
  }
  if (out.inputs.empty()) r.refuse("models lists no model besides the base");

  if (doc["tokenizer_source"]) {
    const std::string src = r.text(doc["tokenizer_source"], "tokenizer_source");
    // slerp's base is input 1, so both of its answers name the same folder.
    if (src == "base" && (!out.base.empty() || row->base_first))
      out.tokenizer_from_base = true;
    else if (src == out.inputs.front())
      out.tokenizer_from_base = false;
    else
      r.refuse("tokenizer_source '" + src + "': wavg copies the tokenizer of base_model (base) or of " +
               out.inputs.front() + " only");
  }
  return out;
}

}  // namespace

Recipe read_recipe(const std::string& path) {
  const Reading r(path);
  // yaml-cpp throws where a node is asked for as the wrong kind (a key of a scalar, a scalar as a number); every
  // such question above is meant to be asked only of the kind checked first, so this is the net under a check
  // forgotten: the recipe is refused by name, as every other mistake in it is.
  try {
    return read_document(r, path);
  } catch (const YAML::Exception& e) {
    r.refuse("not a recipe wavg can read: " + e.msg);
  }
}

}  // namespace wavg::cli
