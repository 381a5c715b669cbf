// Parsing an ONNX model and listing its tensors (layout in onnx.hpp): the ModelProto parsed whole by protobuf's
// generated classes, then every initializer and float Constant checked before anything reads its values.

#include "onnx/onnx_model.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "common/companion_path.hpp"
#include "formats/onnx/onnx_subset.pb.h"
#include "wavg/error.hpp"

namespace wavg {

namespace {

using wavg_onnx::TensorProto;

// The typed field a data type's values lie in when they are not raw_data.
enum class Field : std::uint8_t { float_data, int32_data, int64_data, double_data, uint64_data };

struct Type {
  int code;  // TensorProto.DataType
  DType dtype;
  Field field;
};

// ONNX's numeric data types wavg reads; the others (STRING 8, COMPLEX64 14, COMPLEX128 15, the 8-bit floats 17-20,
// the 4-bit integers 21-22, ...) are left in the graph as they are.
constexpr Type k_types[] = {
    {1, DType::f32, Field::float_data},   {2, DType::u8, Field::int32_data},    {3, DType::i8, Field::int32_data},
    {4, DType::u16, Field::int32_data},   {5, DType::i16, Field::int32_data},   {6, DType::i32, Field::int32_data},
    {7, DType::i64, Field::int64_data},   {9, DType::boolean, Field::int32_data}, {10, DType::f16, Field::int32_data},
    {11, DType::f64, Field::double_data}, {12, DType::u32, Field::uint64_data}, {13, DType::u64, Field::uint64_data},
    {16, DType::bf16, Field::int32_data}};

const Type* type_of_code(int code) {
  for (const Type& t : k_types)
    if (t.code == code) return &t;
  return nullptr;
}

const Type& type_of(DType dtype) {
  for (const Type& t : k_types)
    if (t.dtype == dtype) return t;
  WAVG_ASSERT(!"onnx: a dtype without an ONNX data type");
  return k_types[0];
}

// Returns how many values `t`'s typed field for `f` holds, and how many its other typed fields hold.
std::uint64_t typed_count(const TensorProto& t, Field f, std::uint64_t& others) {
  const std::uint64_t n[] = {static_cast<std::uint64_t>(t.float_data_size()),
                             static_cast<std::uint64_t>(t.int32_data_size()),
                             static_cast<std::uint64_t>(t.int64_data_size()),
                             static_cast<std::uint64_t>(t.double_data_size()),
                             static_cast<std::uint64_t>(t.uint64_data_size())};
  others = 0;
  for (std::size_t i = 0; i < std::size(n); ++i)
    if (i != static_cast<std::size_t>(f)) others += n[i];
  return n[static_cast<std::size_t>(f)];
}

// Parses a decimal offset or length of external_data; false for anything but digits, or an overflow.
bool parse_decimal(const std::string& s, std::uint64_t& v) {
  if (s.empty() || s.size() > 19) return false;
  v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return true;
}

// Tells whether a node takes input `k` as a shape-like value rather than data: Resize's roi (1) and scales (2),
// Upsample's scales (1). Every integer input of a shape (Reshape's shape, Slice's starts, ...) is integer-typed and
// so a constant by its type already.
bool shape_input(const wavg_onnx::NodeProto& n, int k) {
  const bool onnx_domain = !n.has_domain() || n.domain().empty() || n.domain() == "ai.onnx";
  if (!onnx_domain) return false;
  if (n.op_type() == "Resize") return k == 1 || k == 2;
  if (n.op_type() == "Upsample") return k == 1;
  return false;
}

class Lister {
 public:
  Lister(const std::string& path, OnnxModel& m) : m_path(path), m_model(m) {
    const std::size_t slash = path.rfind('/');
    m_dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  }

  // Lists `t` (held by `holder` at `position`: see OnnxTensor) under `name`, when its type is one wavg reads.
  void add(const TensorProto& t, const std::string& name, OnnxHolder holder, std::size_t position) {
    const bool constant_node = holder == OnnxHolder::constant_node;
    const std::string what = (constant_node ? "Constant " : holder == OnnxHolder::subgraph ? "subgraph initializer "
                                                                                              : "initializer ") +
                             name;
    if (name.empty()) fail(m_path, std::string(constant_node ? "a Constant node" : "an initializer") + " has no name");
    if (!m_names.insert(name).second) {
      // Sibling subgraphs (an If's two branches) may each name a value alike; only the first is listed, the others
      // kept as input 1's, since the output's tensors go by name.
      if (holder == OnnxHolder::subgraph) return;
      fail(m_path, what + " appears twice in the graph");
    }
    const Type* type = type_of_code(t.data_type());
    if (!type) return;  // kept in the graph as it is
    if (constant_node && !is_float(type->dtype)) return;
    TensorInfo info;
    info.name = name;
    info.dtype = type->dtype;
    for (std::int64_t d : t.dims()) {
      if (d < 0) fail(m_path, what + ": dimension " + std::to_string(d) + " is negative");
      info.shape.push_back(static_cast<std::uint64_t>(d));
    }
    std::uint64_t count = 0;
    if (!checked_count(info.shape, dtype_size(info.dtype), count))
      fail(m_path, what + ": its shape " + shape_string(info.shape) + " overflows");
    OnnxTensor where{&t, holder, position};
    std::uint64_t others = 0;
    const std::uint64_t typed = typed_count(t, type->field, others);
    const bool external = t.has_data_location() && t.data_location() == 1;
    const int forms = (t.has_raw_data() ? 1 : 0) + (typed > 0 || others > 0 ? 1 : 0) + (external ? 1 : 0);
    if (forms > 1) fail(m_path, what + ": its values are stored in more than one form (raw_data, typed, external)");
    if (t.has_data_location() && t.data_location() != 0 && !external)
      fail(m_path, what + ": data_location " + std::to_string(t.data_location()) + " is neither DEFAULT nor EXTERNAL");
    const std::uint64_t bytes = count * dtype_size(info.dtype);
    if (external) {
      locate_external(t, what, bytes, where);
    } else if (t.has_raw_data()) {
      if (t.raw_data().size() != bytes)
        fail(m_path, what + ": raw_data holds " + std::to_string(t.raw_data().size()) + " bytes; its shape " +
                         shape_string(info.shape) + " of " + std::string(dtype_name(info.dtype)) + " takes " +
                         std::to_string(bytes));
      where.stored = OnnxStored::raw;
      where.bytes = reinterpret_cast<const unsigned char*>(t.raw_data().data());
    } else {
      if (others > 0) fail(m_path, what + ": its values are in a typed field that is not " +
                                       std::string(dtype_name(info.dtype)) + "'s");
      if (typed != count)
        fail(m_path, what + ": holds " + std::to_string(typed) + " values; its shape " + shape_string(info.shape) +
                         " takes " + std::to_string(count));
      where.stored = OnnxStored::typed;
    }
    m_model.tensors.push_back(std::move(info));
    m_model.where.push_back(where);
  }

 private:
  void locate_external(const TensorProto& t, const std::string& what, std::uint64_t bytes, OnnxTensor& where) {
    std::string location;
    std::uint64_t offset = 0, length = bytes;
    bool has_length = false;
    for (const auto& e : t.external_data()) {
      if (e.key() == "location") {
        location = e.value();
      } else if (e.key() == "offset" || e.key() == "length") {
        std::uint64_t v = 0;
        if (!parse_decimal(e.value(), v))
          fail(m_path, what + ": external_data " + e.key() + " '" + e.value() + "' is not a decimal number");
        (e.key() == "offset" ? offset : length) = v;
        has_length = has_length || e.key() == "length";
      }
    }
    if (location.empty()) fail(m_path, what + ": its external_data has no location");
    if (has_length && length != bytes)
      fail(m_path, what + ": external_data length " + std::to_string(length) + " bytes; its shape takes " +
                       std::to_string(bytes));
    auto [it, added] = m_files.emplace(location, m_model.external.size());
    if (added) {
      m_model.external.push_back(map_companion(m_path, m_dir, location, what + "'s external data " + location));
      m_model.external_paths.push_back(m_dir + location);
    }
    const MappedFile& file = m_model.external[it->second];
    if (!file.contains(offset, bytes))
      fail(m_path, what + ": bytes " + std::to_string(offset) + " to " + std::to_string(offset + bytes) +
                       " lie outside " + location + " (" + std::to_string(file.size()) + " bytes)");
    where.stored = OnnxStored::external;
    where.file = it->second;
    where.bytes = file.data() ? file.data() + offset : nullptr;
  }

  const std::string& m_path;
  OnnxModel& m_model;
  std::string m_dir;
  std::set<std::string> m_names;
  std::map<std::string, std::size_t> m_files;
};

// Gives every listed tensor its role from the nodes that consume it, in the main graph and every subgraph
// (onnx.hpp).
void assign_roles(OnnxModel& m, const std::string& path) {
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < m.tensors.size(); ++i) index.emplace(m.tensors[i].name, i);
  std::vector<int> uses(m.tensors.size(), 0), shape_uses(m.tensors.size(), 0);
  auto count_uses = [&](const wavg_onnx::GraphProto& g) {
    for (const auto& n : g.node())
      for (int k = 0; k < n.input_size(); ++k)
        if (const auto it = index.find(n.input(k)); it != index.end()) {
          ++uses[it->second];
          if (shape_input(n, k)) ++shape_uses[it->second];
        }
  };
  count_uses(m.proto->graph());
  for (const auto& n : m.proto->graph().node()) for_subgraphs(n, path, count_uses);
  for (std::size_t i = 0; i < m.tensors.size(); ++i) {
    TensorInfo& t = m.tensors[i];
    const bool shape_only = uses[i] > 0 && uses[i] == shape_uses[i];
    t.role = is_float(t.dtype) && !shape_only ? Role::weight : Role::constant;
  }
}

}  // namespace

void for_subgraphs(const wavg_onnx::NodeProto& n, const std::string& path,
                   const std::function<void(const wavg_onnx::GraphProto&)>& on_graph, int depth) {
  constexpr int k_max_depth = 64;  // a crafted file could nest deeper than the stack allows
  for (const auto& a : n.attribute()) {
    auto visit = [&](const wavg_onnx::GraphProto& g) {
      if (depth >= k_max_depth)
        fail(path, "subgraphs nested over " + std::to_string(k_max_depth) + " deep in node " + n.name());
      on_graph(g);
      for (const auto& inner : g.node()) for_subgraphs(inner, path, on_graph, depth + 1);
    };
    if (a.has_g()) visit(a.g());
    for (const auto& g : a.graphs()) visit(g);
  }
}

OnnxModel::OnnxModel() = default;
OnnxModel::~OnnxModel() = default;
OnnxModel::OnnxModel(OnnxModel&&) noexcept = default;
OnnxModel& OnnxModel::operator=(OnnxModel&&) noexcept = default;

OnnxModel parse_onnx(const std::string& path, const unsigned char* data, std::uint64_t size) {
  if (size > k_max_onnx_bytes)
    fail(path, "the ModelProto is " + std::to_string(size) + " bytes, over protobuf's limit of " +
                   std::to_string(k_max_onnx_bytes) + " (a model this large keeps its weights in external data)");
  OnnxModel m;
  m.proto = std::make_unique<wavg_onnx::ModelProto>();
  if (!m.proto->ParseFromArray(data, static_cast<int>(size)))
    fail(path, "not a valid ONNX ModelProto (protobuf cannot parse it)");
  if (!m.proto->has_graph()) fail(path, "the ModelProto has no graph");
  const auto& g = m.proto->graph();
  Lister lister(path, m);
  for (int i = 0; i < g.initializer_size(); ++i)
    lister.add(g.initializer(i), g.initializer(i).name(), OnnxHolder::initializer, static_cast<std::size_t>(i));
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    const bool onnx_domain = !n.has_domain() || n.domain().empty() || n.domain() == "ai.onnx";
    if (!onnx_domain || n.op_type() != "Constant" || n.output_size() != 1) continue;
    for (const auto& a : n.attribute())
      if (a.name() == "value" && a.has_t())
        lister.add(a.t(), n.output(0), OnnxHolder::constant_node, static_cast<std::size_t>(i));
  }
  for (int i = 0; i < g.node_size(); ++i)
    for_subgraphs(g.node(i), path, [&](const wavg_onnx::GraphProto& sub) {
      for (const auto& t : sub.initializer()) lister.add(t, t.name(), OnnxHolder::subgraph, static_cast<std::size_t>(i));
    });
  assign_roles(m, path);
  return m;
}

int onnx_data_type(DType dtype) { return type_of(dtype).code; }

namespace {

// Copies `count` values of a repeated field from `offset` into `dst` as T.
template <typename T, typename Repeated>
void copy_out(const Repeated& r, std::uint64_t offset, std::uint64_t count, void* dst) {
  auto* out = static_cast<unsigned char*>(dst);
  for (std::uint64_t i = 0; i < count; ++i) {
    const T v = static_cast<T>(r.Get(static_cast<int>(offset + i)));
    std::memcpy(out + i * sizeof(T), &v, sizeof(T));
  }
}

// Returns element `i` of `src` (of T) widened to U.
template <typename T, typename U>
U element(const void* src, std::uint64_t i) {
  T v;
  std::memcpy(&v, static_cast<const unsigned char*>(src) + i * sizeof(T), sizeof(T));
  return static_cast<U>(v);
}

template <typename T, typename U, typename Repeated>
void copy_in(Repeated& r, std::uint64_t count, const void* src) {
  r.Clear();
  r.Reserve(static_cast<int>(count));
  for (std::uint64_t i = 0; i < count; ++i) r.Add(element<T, U>(src, i));
}

}  // namespace

void read_typed(const TensorProto& t, DType dtype, std::uint64_t offset, std::uint64_t count, void* dst) {
  switch (dtype) {
    case DType::f32: return copy_out<float>(t.float_data(), offset, count, dst);
    case DType::f64: return copy_out<double>(t.double_data(), offset, count, dst);
    case DType::i64: return copy_out<std::int64_t>(t.int64_data(), offset, count, dst);
    case DType::u32: return copy_out<std::uint32_t>(t.uint64_data(), offset, count, dst);
    case DType::u64: return copy_out<std::uint64_t>(t.uint64_data(), offset, count, dst);
    case DType::i32: return copy_out<std::int32_t>(t.int32_data(), offset, count, dst);
    // The 8- and 16-bit types, one value in the low bits of each int32 (FLOAT16 and BFLOAT16 as their bits), as
    // onnx.numpy_helper reads them.
    case DType::i8: return copy_out<std::int8_t>(t.int32_data(), offset, count, dst);
    case DType::u8:
    case DType::boolean: return copy_out<std::uint8_t>(t.int32_data(), offset, count, dst);
    case DType::i16: return copy_out<std::int16_t>(t.int32_data(), offset, count, dst);
    case DType::u16:
    case DType::f16:
    case DType::bf16: return copy_out<std::uint16_t>(t.int32_data(), offset, count, dst);
  }
}

void write_typed(TensorProto& t, DType dtype, std::uint64_t count, const void* src) {
  t.clear_raw_data();
  t.clear_float_data();
  t.clear_int32_data();
  t.clear_int64_data();
  t.clear_double_data();
  t.clear_uint64_data();
  switch (dtype) {
    case DType::f32: return copy_in<float, float>(*t.mutable_float_data(), count, src);
    case DType::f64: return copy_in<double, double>(*t.mutable_double_data(), count, src);
    case DType::i64: return copy_in<std::int64_t, std::int64_t>(*t.mutable_int64_data(), count, src);
    case DType::u32: return copy_in<std::uint32_t, std::uint64_t>(*t.mutable_uint64_data(), count, src);
    case DType::u64: return copy_in<std::uint64_t, std::uint64_t>(*t.mutable_uint64_data(), count, src);
    case DType::i32: return copy_in<std::int32_t, std::int32_t>(*t.mutable_int32_data(), count, src);
    case DType::i8: return copy_in<std::int8_t, std::int32_t>(*t.mutable_int32_data(), count, src);
    case DType::u8:
    case DType::boolean: return copy_in<std::uint8_t, std::int32_t>(*t.mutable_int32_data(), count, src);
    case DType::i16: return copy_in<std::int16_t, std::int32_t>(*t.mutable_int32_data(), count, src);
    case DType::u16:
    case DType::f16:
    case DType::bf16: return copy_in<std::uint16_t, std::int32_t>(*t.mutable_int32_data(), count, src);
  }
}

}  // namespace wavg
