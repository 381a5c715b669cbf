// Reading a mergekit YAML recipe (recipe.hpp) with yaml-cpp. mergekit's own model (mergekit/config.py) is followed:
// a parameter setting is a number, a boolean, a gradient (a list of numbers), or conditions ({filter, value}, or a
// list of them); models[i].parameters come before the global parameters. Methods take the parameters mergekit's
// method defines; one that a method does not use is refused rather than ignored, since a recipe that says more
// than the merge does is a recipe the user misread.

#include "cli/recipe.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
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
const std::set<std::string> k_other_methods{"passthrough", "ram", "ramplus_tl"};
const std::set<std::string> k_keys{"models",    "slices",           "base_model", "merge_method",
                                   "parameters", "dtype",         "out_dtype",  "tokenizer_source",
                                   "tokenizer",  "chat_template"};
const std::set<std::string> k_other_keys{"modules"};
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
  const auto check_all = [&](const std::map<std::string, ParamSetting>& global,
                             const std::vector<std::map<std::string, ParamSetting>>& per_input) {
    if (const auto it = global.find(name); it != global.end()) check(it->second);
    for (const auto& m : per_input)
      if (const auto it = m.find(name); it != m.end()) check(it->second);
  };
  check_all(v.global, v.per_input);
  for (const SliceValues& s : v.slices) check_all(s.global, s.per_input);
}

// The first anchor any setting of `name` gives (a recipe's t), for the options' checks; nothing when none does.
std::optional<double> first_anchor(const TensorValues& v, const std::string& name) {
  if (const auto it = v.global.find(name); it != v.global.end()) return it->second.front().values.front();
  for (const SliceValues& s : v.slices)
    if (const auto it = s.global.find(name); it != s.global.end()) return it->second.front().values.front();
  return std::nullopt;
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

// One source of a slice: {model, layer_range: [first, last]} and, where the slice is merged, its parameters.
Slice read_source(const Reading& r, const YAML::Node& src, const std::string& where, bool merged) {
  if (!src.IsMap()) r.refuse(where + " needs model and layer_range: [first, last]");
  for (const auto& kv : src) {
    const std::string key = r.text(kv.first, where + " key");
    if (key != "model" && key != "layer_range" && (!merged || key != "parameters"))
      r.refuse(where + ": unknown key '" + key + "' (a source has model, layer_range" +
               (merged ? " and parameters)" : "; passthrough takes no parameters)"));
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
  return slice;
}

// A passthrough frankenmerge: slices, each of one source {model, layer_range: [first, last]}.
void read_slices(const Reading& r, const YAML::Node& doc, Recipe& out) {
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
    out.slices.push_back(read_source(r, s["sources"][0], where, false));
  }
}

// Slices whose sources are merged (any method but passthrough): in each slice the base's source (the slice's
// base_model, else the recipe's) is set apart and the others pair by position, so every slice must list as many;
// their parameters go per slice into the values (tensor_values.hpp). Fills out.inputs (slice 0's models), the
// values' per-slice settings and out.sliced, the base's sources in sliced.base (left to the caller to place).
void read_merge_slices(const Reading& r, const YAML::Node& slices, const MethodSpec& row, const std::string& method,
                       const std::string& base, const std::set<std::string>& global,
                       const std::set<std::string>& per_model, Recipe& out) {
  if (!slices.IsSequence() || slices.size() == 0) r.refuse("slices must be a list of {sources, ...}");
  const bool takes_base = row.base_first || row.base != BaseUse::none;
  for (std::size_t i = 0; i < slices.size(); ++i) {
    const std::string where = "slices[" + std::to_string(i) + "]";
    const YAML::Node s = slices[i];
    if (!s.IsMap() || !s["sources"] || !s["sources"].IsSequence() || s["sources"].size() == 0)
      r.refuse(where + " must hold sources: a list of {model, layer_range, parameters}");
    for (const auto& kv : s) {
      const std::string key = r.text(kv.first, where + " key");
      if (key == "residual_weight")
        r.refuse(where + ".residual_weight: mergekit reads it but no merge method uses it; leave it out");
      if (key != "sources" && key != "base_model" && key != "parameters")
        r.refuse(where + ": unknown key '" + key + "' (a slice has sources, base_model and parameters)");
    }
    const std::string slice_base = s["base_model"] ? r.text(s["base_model"], where + ".base_model") : base;
    if (!slice_base.empty() && !takes_base) r.refuse("merge_method " + method + " takes no base_model");
    SliceValues values;
    values.global = r.parameters(s["parameters"], where + ".parameters", global, method);
    std::vector<Slice> others;
    std::optional<Slice> base_source;
    std::set<std::string> seen;
    int layers = 0;
    for (std::size_t j = 0; j < s["sources"].size(); ++j) {
      const std::string at = where + ".sources[" + std::to_string(j) + "]";
      const Slice src = read_source(r, s["sources"][j], at, true);
      if (!seen.insert(src.model).second)
        r.refuse(at + ": " + src.model + " is listed twice in one slice (mergekit keys a slice's sources by model)");
      if (j == 0) layers = src.last - src.first;
      if (src.last - src.first != layers)
        r.refuse(at + ".layer_range: " + std::to_string(src.last - src.first) + " layers, sources[0]'s " +
                 std::to_string(layers) + " (the sources of a slice pair layer by layer)");
      if (src.model == slice_base) {  // the base's own parameters do not enter the merge (mergekit)
        base_source = src;
        continue;
      }
      others.push_back(src);
      values.per_input.push_back(r.parameters(s["sources"][j]["parameters"], at + ".parameters", per_model, method));
      values.first.push_back(src.first);
    }
    if (!slice_base.empty() && !base_source)
      r.refuse(where + ": base_model " + slice_base +
               " is none of its sources (each slice merges against its base's layers: list it with a layer_range)");
    if (i > 0 && others.size() != out.sliced.inputs.size())
      r.refuse(where + " merges " + std::to_string(others.size()) + " model(s) besides the base, slices[0] " +
               std::to_string(out.sliced.inputs.size()) + " (wavg pairs the sources of every slice by position)");
    if (i == 0) {
      out.sliced.inputs.resize(others.size());
      for (const Slice& o : others) out.inputs.push_back(o.model);
    }
    if (i > 0 && base_source.has_value() != !out.sliced.base.empty())
      r.refuse(where + ": a base_model in some slices only");
    values.layers = layers;
    for (std::size_t k = 0; k < others.size(); ++k) out.sliced.inputs[k].push_back(others[k]);
    if (base_source) out.sliced.base.push_back(*base_source);
    out.values->slices.push_back(std::move(values));
  }
  out.values->per_input.resize(out.inputs.size());
}

// tokenizer_source (base, union, or a model), or the tokenizer block: {source, tokens: {TOKEN: {source, force}},
// pad_to_multiple_of}. A token's source is a model, {kind: zero}, or {kind: model_token, model, token | token_id}.
// The models named must be the recipe's own (`models`).
std::optional<TokenizerRecipe> read_tokenizer(const Reading& r, const YAML::Node& doc,
                                              const std::vector<std::string>& models) {
  if (doc["tokenizer_source"] && doc["tokenizer"]) r.refuse("give tokenizer_source or tokenizer, not both");
  const auto model = [&](const YAML::Node& n, const std::string& key) {
    const std::string m = r.text(n, key);
    if (std::find(models.begin(), models.end(), m) == models.end())
      r.refuse(key + " '" + m + "' is none of the recipe's models");
    return m;
  };
  const auto source = [&](const YAML::Node& n, const std::string& key) {
    const std::string s = r.text(n, key);
    return s == "base" || s == "union" ? s : model(n, key + " (base, union, or one of the recipe's models)");
  };
  TokenizerRecipe t;
  if (doc["tokenizer_source"]) {
    t.source = source(doc["tokenizer_source"], "tokenizer_source");
    return t;
  }
  const YAML::Node b = doc["tokenizer"];
  if (!b) return std::nullopt;
  if (!b.IsMap()) r.refuse("tokenizer must be a mapping (source, tokens, pad_to_multiple_of)");
  for (const auto& kv : b) {
    const std::string key = r.text(kv.first, "tokenizer key");
    if (key != "source" && key != "tokens" && key != "pad_to_multiple_of")
      r.refuse("tokenizer: unknown key '" + key + "' (it has source, tokens and pad_to_multiple_of)");
  }
  if (b["source"]) t.source = source(b["source"], "tokenizer.source");
  if (b["pad_to_multiple_of"]) {
    const double p = r.number(b["pad_to_multiple_of"], "tokenizer.pad_to_multiple_of");
    if (p != std::floor(p) || p < 1 || p > 1 << 20) r.refuse("tokenizer.pad_to_multiple_of must be a whole number >= 1");
    t.pad_to_multiple_of = static_cast<long>(p);
  }
  const YAML::Node tokens = b["tokens"];
  if (tokens && !tokens.IsNull() && !tokens.IsMap()) r.refuse("tokenizer.tokens must map tokens to {source, force}");
  for (const auto& kv : tokens ? tokens : YAML::Node()) {
    const std::string token = r.text(kv.first, "tokenizer.tokens key");
    const std::string where = "tokenizer.tokens." + token;
    const YAML::Node c = kv.second;
    TokenSource s;
    if (!c.IsMap() || !c["source"])
      r.refuse(where + " needs a source (a model, {kind: zero} or {kind: model_token, model, token | token_id})");
    for (const auto& e : c) {
      const std::string key = r.text(e.first, where + " key");
      if (key != "source" && key != "force") r.refuse(where + ": unknown key '" + key + "' (source, force)");
    }
    if (c["force"]) s.force = r.number(c["force"], where + ".force") != 0;
    const YAML::Node src = c["source"];
    if (src.IsScalar()) {
      s.model = model(src, where + ".source");
    } else if (src.IsMap() && src["kind"] && r.text(src["kind"], where + ".source.kind") == "zero") {
      s.kind = TokenSource::Kind::zero;
      if (src.size() != 1) r.refuse(where + ".source: {kind: zero} takes nothing else");
    } else if (src.IsMap() && src["kind"] && r.text(src["kind"], where + ".source.kind") == "model_token") {
      s.kind = TokenSource::Kind::model_token;
      for (const auto& e : src) {
        const std::string key = r.text(e.first, where + ".source key");
        if (key != "kind" && key != "model" && key != "token" && key != "token_id")
          r.refuse(where + ".source: unknown key '" + key + "' (kind, model, token or token_id)");
      }
      if (!src["model"] || !src["token"] == !src["token_id"])
        r.refuse(where + ".source: model_token needs a model and one of token and token_id");
      s.model = model(src["model"], where + ".source.model");
      if (src["token"]) s.token = r.text(src["token"], where + ".source.token");
      if (src["token_id"]) {
        const double id = r.number(src["token_id"], where + ".source.token_id");
        if (id != std::floor(id) || id < 0 || id > 1e9) r.refuse(where + ".source.token_id must be a whole number >= 0");
        s.token_id = static_cast<long>(id);
      }
    } else {
      r.refuse(where + ".source: a model, {kind: zero} or {kind: model_token, model, token | token_id}");
    }
    t.tokens.emplace_back(token, s);
  }
  return t;
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
  if (name == "passthrough") {
    read_slices(r, doc, out);
    return out;
  }
  const MethodSpec* row = find_mergekit_method(name);
  if (!row && k_other_methods.count(name)) r.refuse("merge_method " + name + " is not supported by wavg yet");
  if (!row) r.refuse("merge_method '" + name + "' is not one of mergekit's methods wavg runs");
  out.method = row;
  out.linear = row->linear;
  const std::set<std::string> global = keys(*row, false), per_model = keys(*row, true);

  const std::string global_base = doc["base_model"] ? r.text(doc["base_model"], "base_model") : "";
  if (doc["models"] && doc["slices"]) r.refuse("give models or slices, not both");
  if (!doc["slices"] && (!doc["models"] || !doc["models"].IsSequence() || doc["models"].size() == 0))
    r.refuse("models must be a list of {model, parameters}");
  out.values = std::make_shared<TensorValues>();
  out.values->global = r.parameters(doc["parameters"], "parameters", global, name);
  if (doc["slices"]) read_merge_slices(r, doc["slices"], *row, name, global_base, global, per_model, out);
  for (std::size_t i = 0; doc["models"] && i < doc["models"].size(); ++i) {
    const YAML::Node m = doc["models"][i];
    const std::string where = "models[" + std::to_string(i) + "]";
    if (!m.IsMap() || !m["model"]) r.refuse(where + " must be a mapping with a model");
    for (const auto& kv : m) {
      const std::string key = r.text(kv.first, where + " key");
      if (key != "model" && key != "parameters")
        r.refuse(where + ": unknown key '" + key + "' (a model has model and parameters)");
    }
    const std::string model = r.text(m["model"], where + ".model");
    if (!global_base.empty() && model == global_base) {  // the base's own parameters do not enter the merge (mergekit)
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
    for (std::size_t i = 0; i < v.slices.size(); ++i)
      if (v.slices[i].global.count(key) ||
          std::any_of(v.slices[i].per_input.begin(), v.slices[i].per_input.end(),
                      [&](const auto& m) { return m.count(key) > 0; }))
        r.refuse("slices[" + std::to_string(i) + "]: " + key +
                 " switches a step for the whole merge in wavg: give it once, in the recipe's parameters");
    if (p.runs_only && v.names(key) && (scalar(v.global, key).value_or(0) != 0) != *p.runs_only)
      r.refuse(key + (*p.runs_only ? ": false" : ": true") +
               (p.unsupported.empty() ? "" : " (" + std::string(p.unsupported) + ")") + " is not supported by wavg");
  }

  // The scalars merge's own options carry: what a plain number gives, else mergekit's default.
  // A sliced merge's weights are each slice's (per tensor): the required check is the values' own, per tensor.
  for (std::size_t k = 0; k < out.inputs.size() && !out.sliced.inputs.empty(); ++k)
    if (per_model.count("weight")) out.weights.push_back(1.0);
  for (std::size_t k = 0; k < out.inputs.size() && out.sliced.inputs.empty(); ++k) {
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

  // A sliced merge's base is each slice's; slice 0's names it in messages and for the tokenizer.
  const std::string base = out.sliced.base.empty() ? global_base : out.sliced.base.front().model;
  if (row->base_first) {
    if (base.empty()) r.refuse("merge_method slerp needs base_model (the model at t = 0)");
    if (out.inputs.size() != 1)
      r.refuse("merge_method slerp takes the base model and one other, got " + std::to_string(out.inputs.size()) +
               " others");
    const std::optional<double> t = first_anchor(v, "t");  // a gradient's first anchor, for the options' checks
    if (!t) r.refuse("merge_method slerp needs parameters.t");
    out.params.try_emplace("t", *t);
    out.inputs.insert(out.inputs.begin(), base);
    out.values->per_input.insert(out.values->per_input.begin(), std::map<std::string, ParamSetting>{});
    if (!out.sliced.base.empty()) {  // the base is input 1 here, not a base
      for (std::size_t i = 0; i < out.values->slices.size(); ++i) {
        SliceValues& s = out.values->slices[i];
        s.per_input.insert(s.per_input.begin(), std::map<std::string, ParamSetting>{});
        s.first.insert(s.first.begin(), out.sliced.base[i].first);
      }
      out.sliced.inputs.insert(out.sliced.inputs.begin(), std::move(out.sliced.base));
      out.sliced.base.clear();
    }
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

  out.base_model = base;
  std::vector<std::string> models = out.sliced.inputs.empty() ? out.inputs : out.sliced.models();
  if (!out.base.empty() && out.sliced.inputs.empty()) models.insert(models.begin(), out.base);
  out.tokenizer = read_tokenizer(r, doc, models);
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
