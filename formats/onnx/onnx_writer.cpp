// The ONNX writer (layout in onnx.hpp): input 1's ModelProto is copied without the values of the tensors the output
// writes (a skeleton, small), each tensor's values gathered in its place (raw_data, sized once) or written to the
// external data file at its offset, and the model serialised in finish(), with the provenance in metadata_props.

#include <fcntl.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <string_view>
#include <unordered_map>

#include "formats/onnx/onnx_subset.pb.h"
#include "onnx/onnx.hpp"
#include "onnx/onnx_model.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/error.hpp"
#include "wavg/file_io.hpp"
#include "wavg/mapped_file.hpp"
#include "wavg/removal.hpp"

namespace wavg {

namespace {

using wavg_onnx::GraphProto;
using wavg_onnx::ModelProto;
using wavg_onnx::NodeProto;
using wavg_onnx::TensorProto;

// onnx's own threshold (external_data_helper's size_threshold): a smaller tensor stays in the model.
constexpr std::uint64_t k_external_threshold = 1024;
// External offsets are aligned so that a runtime may map each tensor (onnxruntime maps at page granularity).
constexpr std::uint64_t k_external_alignment = 4096;

// Copies `from` into `to` without its values (every value field, and the external_data of input 1's file).
void copy_without_values(const TensorProto& from, TensorProto& to) {
  *to.mutable_dims() = from.dims();
  if (from.has_data_type()) to.set_data_type(from.data_type());
  if (from.has_name()) to.set_name(from.name());
  to.mutable_unknown_fields()->MergeFrom(from.unknown_fields());  // doc_string, segment, metadata_props, ...
}

// Copies Constant node `from` into `to`, its value tensor without its values; returns that tensor.
TensorProto* copy_constant_node(const NodeProto& from, NodeProto& to) {
  *to.mutable_input() = from.input();
  *to.mutable_output() = from.output();
  if (from.has_name()) to.set_name(from.name());
  if (from.has_op_type()) to.set_op_type(from.op_type());
  if (from.has_domain()) to.set_domain(from.domain());
  to.mutable_unknown_fields()->MergeFrom(from.unknown_fields());
  TensorProto* value = nullptr;
  for (const auto& a : from.attribute()) {
    auto* b = to.add_attribute();
    if (a.name() != "value" || !a.has_t() || value) {
      b->CopyFrom(a);
      continue;
    }
    if (a.has_name()) b->set_name(a.name());
    if (a.has_type()) b->set_type(a.type());
    b->mutable_unknown_fields()->MergeFrom(a.unknown_fields());
    value = b->mutable_t();
    copy_without_values(a.t(), *value);
  }
  WAVG_ASSERT(value);
  return value;
}

// Tells whether the bytes of an .onnx model spell `data` as an external data location: field 2 (value) of a
// StringStringEntryProto, its tag, length and bytes, so that my_model.onnx.data is not taken for model.onnx.data.
// A test that may see a use where there is none (a tensor's raw bytes), and never misses one.
bool spells_location(const MappedFile& model, const std::string& data) {
  std::string needle = "\x12";
  for (std::uint64_t v = data.size(); ; v >>= 7) {
    needle += static_cast<char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    if (v < 0x80) break;
  }
  needle += data;
  return std::string_view(reinterpret_cast<const char*>(model.data()), model.size()).find(needle) !=
         std::string_view::npos;
}

// Names an .onnx model in the folder of `target`, other than `target` itself, that uses the external data file
// `data` (spells_location; a model it cannot read counts as using it), or "" when none does.
std::string other_model_naming(const std::filesystem::path& target, const std::string& data) {
  namespace fs = std::filesystem;
  const fs::path folder = target.parent_path();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder.empty() ? "." : folder, ec)) {
    const std::string name = e.path().filename().string();
    if (name == target.filename().string() || !name.ends_with(".onnx") || !e.is_regular_file(ec)) continue;
    try {
      if (spells_location(MappedFile(e.path().string()), data)) return e.path().string();
    } catch (const Error&) {
      return e.path().string();
    }
  }
  return "";
}

// Records the external data file an earlier output of this name left (OUT.data) for removal after the commit, when
// this output has none, as removal.hpp allows: that one name, a plain file, named by the earlier output itself (a
// file of that name beside no such model is the user's, not ours to retire) and by no other .onnx model in the
// folder, and only with --force.
void retire_old_data(const std::string& tmp_path, const std::string& display) {
  namespace fs = std::filesystem;
  const fs::path target(display);
  const std::string folder = target.parent_path().string(), data = target.filename().string() + ".data";
  OwnFiles own{folder, "ONNX external data file", [&](const std::string& n) { return n == data; }, {}};
  const std::vector<std::string> candidates = files_named_like(own);
  if (candidates.empty()) return;
  std::error_code ec;
  bool named_by_old = false;
  if (fs::is_regular_file(target, ec)) try {
      named_by_old = spells_location(MappedFile(display), data);
    } catch (const Error&) {
    }
  if (!named_by_old || !other_model_naming(target, data).empty()) return;
  for (const std::string& name : removable_files(own, candidates, overwrite_of(tmp_path)))
    retire_after_commit(tmp_path, (target.parent_path() / name).string());
}

// Where an output tensor goes.
struct Place {
  TensorProto* proto = nullptr;  // in the output model
  OnnxStored stored = OnnxStored::raw;
  std::uint64_t at = 0;      // external: its offset in the data file
  std::string typed_values;  // typed: the values, converted in finish()
};

class OnnxWriter final : public Writer {
 public:
  OnnxWriter(const std::string& tmp_path, const std::string& display_path, const OutputSpec& spec)
      : m_display(display_path), m_spec(spec) {
    const auto* in = dynamic_cast<const OnnxReader*>(spec.template_input);
    if (!in)
      fail(m_display, "an ONNX output is input 1's graph with merged initializers, and input 1 is " +
                          (spec.template_input ? spec.template_input->format_name() : std::string("no model")) +
                          ", which has no graph");
    const OnnxModel& m = in->model();
    std::unordered_map<std::string, std::size_t> by_name, in_template;
    for (std::size_t i = 0; i < spec.tensors.size(); ++i) by_name.emplace(spec.tensors[i].name, i);
    for (std::size_t j = 0; j < m.tensors.size(); ++j) in_template.emplace(m.tensors[j].name, j);
    for (const TensorInfo& t : spec.tensors) {
      const auto it = in_template.find(t.name);
      if (it == in_template.end())
        fail(m_display, t.name + ": no initializer of input 1's graph has this name (an ONNX output holds input 1's)");
      const TensorInfo& want = m.tensors[it->second];
      if (t.dtype != want.dtype || t.shape != want.shape)
        fail(m_display, t.name + ": input 1's graph takes it as " + std::string(dtype_name(want.dtype)) + " " +
                            shape_string(want.shape) + ", not " + std::string(dtype_name(t.dtype)) + " " +
                            shape_string(t.shape) + " (an ONNX output keeps its graph's types and shapes)");
    }
    for (const TensorInfo& t : m.tensors)
      if (!by_name.contains(t.name))
        fail(m_display, "initializer " + t.name + " of input 1 would be left out, and input 1's graph uses it");
    m_places.resize(spec.tensors.size());
    skeleton(m, by_name);

    // External data when input 1 has it, or when the model would pass protobuf's 2 GiB, counting the metadata
    // finish() adds: an input 1 just under the limit passes it with the provenance.
    std::uint64_t inline_bytes = m_model.ByteSizeLong() + metadata_bytes();
    for (const TensorInfo& t : spec.tensors) inline_bytes += t.bytes() + 16;  // its tag and length, generously
    m_external = !m.external.empty() || inline_bytes > k_max_onnx_bytes;
    std::uint64_t data_size = 0;
    for (std::size_t i = 0; i < spec.tensors.size(); ++i) {
      const TensorInfo& t = spec.tensors[i];
      Place& p = m_places[i];
      if (m_external && t.bytes() >= k_external_threshold) {
        data_size = (data_size + k_external_alignment - 1) / k_external_alignment * k_external_alignment;
        p.stored = OnnxStored::external;
        p.at = data_size;
        data_size += t.bytes();
      } else if (p.stored == OnnxStored::typed) {
        p.typed_values.resize(t.bytes());
      } else {
        p.stored = OnnxStored::raw;
        p.proto->mutable_raw_data()->resize(t.bytes());
      }
    }
    if (data_size > 0)
      open_data_file(tmp_path, data_size);
    else
      retire_old_data(tmp_path, m_display);
    m_fd = ::open(tmp_path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (m_fd < 0) fail(m_display, std::strerror(errno));
  }

  ~OnnxWriter() override {
    if (m_fd >= 0) ::close(m_fd);
    if (m_data_fd >= 0) ::close(m_data_fd);
  }

  bool holds_template_values(std::size_t) const override { return false; }

  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    const std::uint64_t elem = dtype_size(m_spec.tensors[index].dtype);
    Place& p = m_places[index];
    switch (p.stored) {
      case OnnxStored::external: return pwrite_all(m_data_fd, src, count * elem, p.at + offset * elem, m_display);
      case OnnxStored::typed: std::memcpy(p.typed_values.data() + offset * elem, src, count * elem); return;
      case OnnxStored::raw: std::memcpy(p.proto->mutable_raw_data()->data() + offset * elem, src, count * elem);
    }
  }

  void finish() override {
    for (std::size_t i = 0; i < m_places.size(); ++i) {
      Place& p = m_places[i];
      if (p.stored != OnnxStored::typed) continue;
      write_typed(*p.proto, m_spec.tensors[i].dtype, m_spec.tensors[i].count(), p.typed_values.data());
      std::string().swap(p.typed_values);
    }
    set_metadata();
    if (m_model.ByteSizeLong() > k_max_onnx_bytes)
      fail(m_display, "the ModelProto would be " + std::to_string(m_model.ByteSizeLong()) +
                          " bytes, over protobuf's limit of " + std::to_string(k_max_onnx_bytes));
    {
      google::protobuf::io::FileOutputStream out(m_fd);
      if (!m_model.SerializeToZeroCopyStream(&out) || !out.Flush())
        fail(m_display, std::string("cannot write the model: ") + std::strerror(out.GetErrno()));
    }
    close_output(m_fd, m_display);
    if (m_data_fd >= 0) close_output(m_data_fd, m_data_name);
  }

 private:
  // Copies input 1's model into m_model without the listed tensors' values, and records each one's place.
  void skeleton(const OnnxModel& m, const std::unordered_map<std::string, std::size_t>& by_name) {
    const ModelProto& from = *m.proto;
    if (from.has_ir_version()) m_model.set_ir_version(from.ir_version());
    if (from.has_producer_name()) m_model.set_producer_name(from.producer_name());
    if (from.has_producer_version()) m_model.set_producer_version(from.producer_version());
    *m_model.mutable_metadata_props() = from.metadata_props();
    m_model.mutable_unknown_fields()->MergeFrom(from.unknown_fields());
    const GraphProto& g = from.graph();
    GraphProto& out = *m_model.mutable_graph();
    if (g.has_name()) out.set_name(g.name());
    out.mutable_unknown_fields()->MergeFrom(g.unknown_fields());
    // Which initializers and nodes hold listed tensors (their indices in m.tensors), and which nodes have listed
    // tensors in their subgraphs (by name: a subgraph's tensors are found by walking the copied node).
    std::unordered_map<std::size_t, std::size_t> initializer, node;
    std::unordered_map<std::size_t, std::unordered_map<std::string, std::size_t>> subgraph;
    for (std::size_t j = 0; j < m.tensors.size(); ++j) switch (m.where[j].holder) {
        case OnnxHolder::initializer: initializer.emplace(m.where[j].position, j); break;
        case OnnxHolder::constant_node: node.emplace(m.where[j].position, j); break;
        case OnnxHolder::subgraph: subgraph[m.where[j].position].emplace(m.tensors[j].name, j); break;
      }
    auto place = [&](std::size_t j, TensorProto& t) {
      const std::size_t i = by_name.at(m.tensors[j].name);
      Place& p = m_places[i];
      p.proto = &t;
      // A tensor keeps a typed field where input 1 has one; raw_data otherwise (or external data, laid out later).
      p.stored = m.where[j].stored == OnnxStored::typed && m_spec.tensors[i].count() > 0 ? OnnxStored::typed
                                                                                         : OnnxStored::raw;
    };
    for (int i = 0; i < g.initializer_size(); ++i) {
      TensorProto* t = out.add_initializer();
      const auto it = initializer.find(static_cast<std::size_t>(i));
      if (it == initializer.end()) {
        t->CopyFrom(g.initializer(i));
        continue;
      }
      copy_without_values(g.initializer(i), *t);
      place(it->second, *t);
    }
    for (int i = 0; i < g.node_size(); ++i) {
      NodeProto* n = out.add_node();
      const auto it = node.find(static_cast<std::size_t>(i));
      if (it == node.end()) {
        n->CopyFrom(g.node(i));
        if (const auto sub = subgraph.find(static_cast<std::size_t>(i)); sub != subgraph.end())
          place_subgraph_tensors(*n, sub->second, place);
        continue;
      }
      place(it->second, *copy_constant_node(g.node(i), *n));
    }
  }

  // Places the listed tensors in the subgraphs of `n` (copied whole from input 1: a subgraph's weights are small
  // beside the main graph's), each emptied of its values; the first of a name, as the reader lists it.
  template <typename PlaceFn>
  void place_subgraph_tensors(NodeProto& n, std::unordered_map<std::string, std::size_t> listed, PlaceFn& place) {
    for_subgraphs(n, m_display, [&](const GraphProto& sub) {
      // The graph is m_model's, which this writer owns: the walk is const, the change is not.
      auto& graph = const_cast<GraphProto&>(sub);
      for (TensorProto& t : *graph.mutable_initializer()) {
        const auto it = listed.find(t.name());
        if (it == listed.end()) continue;
        TensorProto bare;
        copy_without_values(t, bare);
        t = std::move(bare);
        place(it->second, t);
        listed.erase(it);
      }
    });
  }

  // Creates the external data file OUT.data, a companion of the output, and points each external tensor at it.
  void open_data_file(const std::string& tmp_path, std::uint64_t size) {
    const std::size_t slash = m_display.rfind('/');
    const std::string location = m_display.substr(slash == std::string::npos ? 0 : slash + 1) + ".data";
    m_data_name = m_display + ".data";
    // Even --force never writes over another model's data: a copy of an earlier output (kept.onnx) still reads it.
    if (const std::string other = other_model_naming(m_display, location); !other.empty())
      throw Error(ExitCode::usage, m_data_name,
                  "is the external data file of " + other + "; writing it would change that model (choose another "
                  "output name, or move that model and its data away)");
    const std::string data_tmp = add_replacing_companion(tmp_path, m_data_name);
    m_data_fd = ::open(data_tmp.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (m_data_fd < 0) fail(m_data_name, std::strerror(errno));
    if (::ftruncate(m_data_fd, static_cast<off_t>(size)) != 0)
      fail(m_data_name, std::string("cannot size the external data file: ") + std::strerror(errno));
    for (std::size_t i = 0; i < m_places.size(); ++i) {
      Place& p = m_places[i];
      if (p.stored != OnnxStored::external) continue;
      TensorProto& t = *p.proto;
      t.clear_external_data();
      const std::pair<const char*, std::string> entries[] = {
          {"location", location}, {"offset", std::to_string(p.at)}, {"length", std::to_string(m_spec.tensors[i].bytes())}};
      for (const auto& [k, v] : entries) {
        auto* e = t.add_external_data();
        e->set_key(k);
        e->set_value(v);
      }
      t.set_data_location(1);
    }
  }

  // Returns what set_metadata() may add to the model at most: every entry of the spec and the provenance (their
  // layout: the final lengths) with its tags and lengths, generously 32 bytes an entry.
  std::uint64_t metadata_bytes() const {
    std::uint64_t n = 0;
    auto add = [&](const std::map<std::string, std::string>& entries) {
      for (const auto& [k, v] : entries) n += k.size() + v.size() + 32;
    };
    add(m_spec.metadata);
    if (!m_spec.provenance.empty()) add(m_spec.provenance.layout_entries());
    return n;
  }

  // Sets metadata_props: input 1's, then the spec's starting entries it lacks, then the provenance (replacing).
  void set_metadata() {
    auto& props = *m_model.mutable_metadata_props();
    auto set = [&](const std::string& k, const std::string& v, bool replace) {
      for (auto& e : props)
        if (e.key() == k) {
          if (replace) e.set_value(v);
          return;
        }
      auto* e = props.Add();
      e->set_key(k);
      e->set_value(v);
    };
    for (const auto& [k, v] : m_spec.metadata) set(k, v, false);
    for (const auto& [k, v] : m_spec.provenance.entries()) set(k, v, true);
  }

  std::string m_display;
  const OutputSpec& m_spec;
  ModelProto m_model;
  std::vector<Place> m_places;
  bool m_external = false;
  int m_fd = -1;
  int m_data_fd = -1;
  std::string m_data_name;
};

}  // namespace

std::unique_ptr<Writer> create_onnx_writer(const std::string& tmp_path, const std::string& display_path,
                                           const OutputSpec& spec) {
  return std::make_unique<OnnxWriter>(tmp_path, display_path, spec);
}

}  // namespace wavg
