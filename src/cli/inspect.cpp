// wavg inspect: the tensors of one checkpoint as a table, or as JSON with --json.

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/common.hpp"
#include "wavg/stdio_files.hpp"

namespace wavg::cli {

namespace {

struct InspectOptions {
  std::string input;
  bool json = false, verbose = false;
};

struct Totals {
  std::uint64_t tensors = 0, float_tensors = 0, values = 0, float_values = 0, bytes = 0;
};

Totals totals_of(const std::vector<TensorInfo>& tensors) {
  Totals t;
  for (const auto& x : tensors) {
    ++t.tensors;
    t.values += x.count() / parts_per_element(x);
    t.bytes += x.bytes();
    if (is_float(x.dtype)) {
      ++t.float_tensors;
      t.float_values += x.count() / parts_per_element(x);
    }
  }
  return t;
}

void print_json(const Reader& r, const Totals& t) {
  nlohmann::ordered_json j;
  j["file"] = as_given(r.path());  // "-" for standard input, not the path of its private copy
  j["format"] = r.format_name();
  j["layout"] = r.layout();
  j["tensors"] = nlohmann::json::array();
  const RolesInFile roles = roles_in(r.tensors());
  for (const auto& x : r.tensors()) {
    bool by_name = false;
    const Role role = resolve_role(x, &by_name, roles);
    nlohmann::ordered_json tensor{{"name", x.name},
                                  {"dtype", element_type_name(x)},
                                  {"shape", stored_shape(x)},
                                  {"values", x.count() / parts_per_element(x)},
                                  {"role", name_of(k_role_names, role)}};
    if (!x.alias_of.empty()) tensor["alias_of"] = x.alias_of;
    if (!x.stored_as.empty()) tensor["stored_as"] = x.stored_as;
    if (by_name) tensor["role_by_name"] = true;
    j["tensors"].push_back(std::move(tensor));
  }
  j["totals"] = {{"tensors", t.tensors},
                 {"float_tensors", t.float_tensors},
                 {"values", t.values},
                 {"float_values", t.float_values},
                 {"bytes", t.bytes}};
  if (const LoraAdapter* a = r.lora_adapter()) {
    nlohmann::ordered_json modules = nlohmann::ordered_json::array();
    for (const LoraModule& m : a->modules)
      modules.push_back({{"name", m.name}, {"rank", m.rank}, {"alpha", m.alpha}, {"scale", m.scale}});
    j["lora"] = {{"r", a->r},           {"lora_alpha", a->alpha},         {"use_rslora", a->rslora},
                 {"use_dora", a->dora}, {"base_model", a->base_model},    {"target_modules", a->target_modules},
                 {"modules_to_save", a->modules_to_save}, {"modules", modules}};
  }
  j["metadata"] = r.metadata();
  // What the file holds besides tensors (a PyTorch checkpoint's epoch, optimizer hyper-parameters).
  if (!r.kept_entries().empty()) j["not_tensors"] = r.kept_entries();
  std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

// A whole model's modules each keep a few plain attributes (training, in_features, _is_full_backward_hook): without
// -v the table counts them in one line and lists only the rest (objects, containers that hold something). Only for
// a layout the reader calls a whole model: a training checkpoint's few plain values (epoch, loss) stay listed.
bool plain_attribute(const Reader& r, const std::string& kept) {
  if (r.layout().find("whole model") == std::string::npos) return false;
  for (const char* plain : {"(None", "(bool ", "(int ", "(float ", "(str ", "(dict of 0", "(list of 0", "(tuple of "})
    if (kept.find(plain) != std::string::npos) return true;
  return false;
}

void print_kept(const Reader& r, bool verbose) {
  std::size_t folded = 0;
  for (const std::string& kept : r.kept_entries()) {
    if (!verbose && plain_attribute(r, kept))
      ++folded;
    else
      std::printf("not a tensor: %s\n", printable(kept).c_str());
  }
  if (folded) std::printf("%zu plain values kept (-v lists them)\n", folded);
}

// An adapter's modules, each with the rank and scale its update s * B * A has (rank_pattern and alpha_pattern
// applied).
void print_lora(const LoraAdapter& a) {
  std::printf("%s modules (scale = lora_alpha / %s):\n", a.dora ? "DoRA" : "LoRA", a.rslora ? "sqrt(r), rsLoRA" : "r");
  if (!a.base_model.empty()) std::printf("  base model %s\n", printable(a.base_model).c_str());
  std::size_t name_w = 0;
  for (const LoraModule& m : a.modules) name_w = std::max(name_w, printable(m.name).size());
  for (const LoraModule& m : a.modules)
    std::printf("  %-*s  rank %llu  alpha %g  scale %g\n", static_cast<int>(name_w), printable(m.name).c_str(),
                static_cast<unsigned long long>(m.rank), m.alpha, m.scale);
}

// The dtype a tensor is read as, and the format's own type it is decoded from: "float32 (Q8_0)".
std::string dtype_column(const TensorInfo& t) {
  return element_type_name(t) + (t.stored_as.empty() ? "" : " (" + t.stored_as + ")");
}

void print_table(const Reader& r, const Totals& t, bool verbose) {
  // Everything taken from the file is escaped as error lines are, so no name can end its line or drive the terminal.
  std::printf("%s: %s, %s\n", printable(as_given(r.path())).c_str(), r.format_name().c_str(),
              printable(r.layout()).c_str());
  for (const auto& [key, value] : r.metadata()) {
    // Provenance is shown whole; other metadata (model configs of tens of kB) only by size.
    const bool whole = key.rfind("wavg_", 0) == 0 || value.size() <= 60;
    const std::string shown = whole ? value : "(" + std::to_string(value.size()) + " characters)";
    std::printf("  %s = %s\n", printable(key).c_str(), printable(shown).c_str());
  }
  std::size_t name_w = 4, dtype_w = 5, shape_w = 5, role_w = 4;
  std::vector<std::string> role_texts;
  const RolesInFile roles = roles_in(r.tensors());
  for (const auto& x : r.tensors()) {
    bool by_name = false;
    const Role role = resolve_role(x, &by_name, roles);
    role_texts.push_back(std::string(name_of(k_role_names, role)) + (by_name ? " (by name)" : "") +
                         (x.alias_of.empty() ? "" : " of " + x.alias_of));
    name_w = std::max(name_w, printable(x.name).size());
    dtype_w = std::max(dtype_w, dtype_column(x).size());
    shape_w = std::max(shape_w, shape_string(stored_shape(x)).size());
    role_w = std::max(role_w, role_texts.back().size());
  }
  const int nw = static_cast<int>(name_w), dw = static_cast<int>(dtype_w), sw = static_cast<int>(shape_w),
            rw = static_cast<int>(role_w);
  std::printf("%-*s  %-*s  %-*s  %-*s  %s\n", nw, "name", dw, "dtype", sw, "shape", rw, "role", "values");
  for (std::size_t i = 0; i < r.tensors().size(); ++i) {
    const TensorInfo& x = r.tensors()[i];
    std::printf("%-*s  %-*s  %-*s  %-*s  %llu\n", nw, printable(x.name).c_str(), dw,
                dtype_column(x).c_str(), sw, shape_string(stored_shape(x)).c_str(), rw, role_texts[i].c_str(),
                static_cast<unsigned long long>(x.count() / parts_per_element(x)));
  }
  if (r.lora_adapter()) print_lora(*r.lora_adapter());
  print_kept(r, verbose);
  std::printf("%llu tensors (%llu float, %llu other), %llu values (%llu float), %llu bytes\n",
              static_cast<unsigned long long>(t.tensors), static_cast<unsigned long long>(t.float_tensors),
              static_cast<unsigned long long>(t.tensors - t.float_tensors), static_cast<unsigned long long>(t.values),
              static_cast<unsigned long long>(t.float_values), static_cast<unsigned long long>(t.bytes));
}

int run_inspect(const InspectOptions& o) {
  auto reader = open_reader(o.input);
  const Totals t = totals_of(reader->tensors());
  if (o.json)
    print_json(*reader, t);
  else
    print_table(*reader, t, o.verbose);
  return 0;
}

}  // namespace

RunFn setup_inspect(CLI::App& app) {
  auto o = std::make_shared<InspectOptions>();
  app.add_option("input", o->input, "Checkpoint to list")->required();
  app.add_flag("--json", o->json, "Print JSON on stdout instead of a table");
  app.add_flag("-v,--verbose", o->verbose, "List a whole model's plain attributes too, not only their count");
  return [o] { return run_inspect(*o); };
}

}  // namespace wavg::cli
