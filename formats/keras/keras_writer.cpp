// Writing .keras archives: the weights through the HDF5 writer into a private temporary file, then one zip with
// the template's config.json, its metadata.json plus provenance, and the new weights (layout in keras_archive.hpp).
// When every float variable changed to one new dtype (--out-dtype), config.json's layer dtype policies say so, or
// Keras would build float32 variables and cast the stored float16 values up on load.

#include <unistd.h>
#include <zip.h>

#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

#include "hdf5/hdf5_writer.hpp"
#include "keras/keras_archive.hpp"
#include "wavg/error.hpp"

namespace wavg {

namespace {

// Returns the one float dtype every float weight, buffer and optimizer moment of the output has when it differs
// from the template's for some tensor (the output was retyped), or nothing. Hyper-parameters and counters keep their
// dtype under --out-dtype (Keras keeps a float16 model's learning rate in float32), so they do not count.
std::optional<DType> retyped_to(const std::vector<TensorInfo>& out, const std::vector<TensorInfo>& in) {
  std::optional<DType> to;
  bool changed = false;
  std::unordered_map<std::string_view, DType> dtype_in;  // a search per tensor was quadratic
  for (const TensorInfo& u : in) dtype_in.emplace(u.name, u.dtype);
  for (const TensorInfo& t : out) {
    if (!is_float(t.dtype) || t.role == Role::hyper_parameter || t.role == Role::counter || t.role == Role::rng)
      continue;
    if (to && *to != t.dtype) return std::nullopt;
    to = t.dtype;
    const auto found = dtype_in.find(t.name);
    if (found != dtype_in.end() && found->second != t.dtype) changed = true;
  }
  return changed ? to : std::nullopt;
}

bool is_float_policy(const std::string& name) {
  return name == "float16" || name == "bfloat16" || name == "float32" || name == "float64" || name == "mixed_float16" ||
         name == "mixed_bfloat16";
}

// Sets every layer's dtype policy in a Keras 3 config to `dtype`: DTypePolicy objects and plain dtype strings
// (Keras 3.0's spelling), but not an InputLayer's dtype, which is the dtype of the data fed to the model.
void set_policies(nlohmann::ordered_json& node, const std::string& dtype) {
  if (node.is_array())
    for (auto& item : node) set_policies(item, dtype);
  if (!node.is_object()) return;
  const bool input_layer = node.value("class_name", nlohmann::ordered_json()) == "InputLayer";
  for (auto& [key, value] : node.items()) {
    if (key == "dtype" && value.is_string() && is_float_policy(value.get<std::string>())) value = dtype;
    if (key == "dtype" && value.is_object() && value.contains("config") && value["config"].is_object()) {
      auto& name = value["config"]["name"];
      if (name.is_string() && is_float_policy(name.get<std::string>())) name = dtype;
    }
    if (!(input_layer && key == "config")) set_policies(value, dtype);
  }
}

struct ZipDiscard {
  void operator()(zip_t* z) const { zip_discard(z); }
};

class KerasWriter final : public Writer {
 public:
  KerasWriter(const std::string& tmp_path, const std::string& display_path, const OutputSpec& spec)
      : m_tmp_path(tmp_path), m_display(display_path) {
    m_template = dynamic_cast<KerasArchiveReader*>(spec.template_input);
    if (!m_template)
      fail(display_path,
           "a .keras output needs a .keras input whose weights are named like the output's (its "
           "config.json describes the model); write .weights.h5 instead");
    // The weights file keeps input 1's HDF5 tree; provenance goes to metadata.json, where Keras keeps its own.
    m_inner_spec = spec;
    m_inner_spec.template_input = &m_template->weights();
    m_inner_spec.provenance = {};
    m_provenance = spec.provenance;
    m_weights.emplace("keras-out", ".weights.h5", display_path);
    m_inner = create_hdf5_writer(m_weights->path(), display_path, m_inner_spec);
    m_config = m_template->config_json();
    if (const auto to = retyped_to(spec.tensors, m_template->tensors())) {
      nlohmann::ordered_json config;
      try {
        config = nlohmann::ordered_json::parse(m_config);
      } catch (const nlohmann::json::exception&) {
        fail(m_template->path(), "config.json is not JSON, so its dtype cannot follow --out-dtype");
      }
      set_policies(config, std::string(dtype_name(*to)));
      m_config = config.dump();
    }
  }

  ~KerasWriter() override { m_inner.reset(); }

  bool holds_template_values(std::size_t index) const override { return m_inner->holds_template_values(index); }
  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    m_inner->write(index, offset, count, src);
  }

  void finish() override {
    // entries() waits for the inputs' hash threads: the archive is assembled once they are done.
    const auto provenance = m_provenance.entries();
    m_inner->finish();
    m_inner.reset();
    int code = 0;
    std::unique_ptr<zip_t, ZipDiscard> z(zip_open(m_tmp_path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code));
    if (!z) fail(m_display, "cannot create the zip archive");
    nlohmann::ordered_json meta = nlohmann::ordered_json::parse(m_template->metadata_json());
    for (const auto& [k, v] : provenance) meta[k] = v;
    m_metadata = meta.dump();
    add_buffer(z.get(), "metadata.json", m_metadata);
    add_buffer(z.get(), "config.json", m_config);
    zip_source_t* src = zip_source_file(z.get(), m_weights->path().c_str(), 0, -1);
    if (!src) fail(m_display, std::string("model.weights.h5: ") + zip_strerror(z.get()));
    add_source(z.get(), "model.weights.h5", src);
    if (zip_close(z.get()) != 0) fail(m_display, std::string("cannot write the zip archive: ") + zip_strerror(z.get()));
    z.release();  // zip_close freed it
  }

 private:
  void add_buffer(zip_t* z, const char* name, const std::string& text) {
    zip_source_t* src = zip_source_buffer(z, text.data(), text.size(), 0);
    if (!src) fail(m_display, std::string(name) + ": " + zip_strerror(z));
    add_source(z, name, src);
  }

  // Adds an entry stored without compression, as Keras writes them.
  void add_source(zip_t* z, const char* name, zip_source_t* src) {
    const zip_int64_t i = zip_file_add(z, name, src, ZIP_FL_ENC_UTF_8);
    if (i < 0) {
      zip_source_free(src);
      fail(m_display, std::string(name) + ": " + zip_strerror(z));
    }
    if (zip_set_file_compression(z, static_cast<zip_uint64_t>(i), ZIP_CM_STORE, 0) != 0)
      fail(m_display, std::string(name) + ": " + zip_strerror(z));
  }

  std::string m_tmp_path;
  std::string m_display;
  KerasArchiveReader* m_template = nullptr;
  OutputSpec m_inner_spec;
  Provenance m_provenance;
  std::string m_metadata;             // metadata.json; libzip reads it at zip_close
  std::string m_config;               // config.json, likewise
  std::optional<TempFile> m_weights;  // model.weights.h5, written by m_inner
  std::unique_ptr<Writer> m_inner;
};

}  // namespace

std::unique_ptr<Writer> create_keras_writer(const std::string& tmp_path, const std::string& display_path,
                                            const OutputSpec& spec) {
  return std::make_unique<KerasWriter>(tmp_path, display_path, spec);
}

}  // namespace wavg
