// Reading a DCP .metadata pickle into plain data, and each entry's role (layout and rules in dcp.hpp).

#include "dcp/dcp_metadata.hpp"

#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "pytorch/optim_state.hpp"
#include "pytorch/pickle.hpp"
#include "wavg/error.hpp"

namespace wavg::dcp {

namespace {

using pytorch::Kind;
using pytorch::Value;

constexpr const char* k_module = "torch.distributed.checkpoint.metadata.";

// torch names its dtypes as wavg does, behind the module: torch.float32, torch.bfloat16, torch.bool, ...
constexpr std::string_view k_torch = "torch.";

// Globals the metadata pickles as plain values: any torch dtype (those wavg does not read are refused by name
// later, not as unknown globals), the layout, the memory-format enum and the checkpoint's path.
std::vector<std::string> value_names() {
  std::vector<std::string> names;
  for (const char* t :
       {"float32",    "float64",       "float16",     "bfloat16",        "int64",           "int32",  "int16",
        "int8",       "uint8",         "uint16",      "uint32",          "uint64",          "bool",   "complex64",
        "complex128", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "strided"})
    names.push_back(std::string(k_torch) + t);
  // DCP's own dataclasses, made by NEWOBJ(class, ()) and BUILD: the unpickler instantiates no torch class
  // outside torch.nn by itself, so these are named here; parse_metadata checks each object's class where it sits.
  for (const char* c : {"Metadata", "TensorStorageMetadata", "BytesStorageMetadata", "ChunkStorageMetadata",
                        "TensorProperties", "MetadataIndex", "StorageMeta", "_MEM_FORMAT_ENCODING"})
    names.push_back(std::string(k_module) + c);
  names.push_back("torch.distributed.checkpoint.filesystem._StorageInfo");
  names.push_back("torch.serialization._get_layout");
  for (const char* p :
       {"pathlib.PosixPath", "pathlib.WindowsPath", "pathlib._local.PosixPath", "pathlib._local.WindowsPath"})
    names.push_back(p);
  return names;
}

class Parser {
 public:
  explicit Parser(const std::string& file) : m_file(file) {}

  [[noreturn]] void bad(const std::string& what) const { pytorch::refuse(m_file, "DCP metadata: " + what); }

  // The attributes of an object of class `cls` (a dict, or TensorProperties' tuple).
  const Value& object(const Value* v, const std::string& cls, const std::string& where) const {
    if (!v || v->kind != Kind::object || v->text != cls)
      bad(where + " is " + (v ? pytorch::describe(*v) : "missing") + ", not a " + cls);
    static const Value k_none;
    return v->state ? *v->state : k_none;
  }
  const Value* field(const Value& state, const char* name) const {
    if (state.kind != Kind::dict) return nullptr;
    for (std::size_t i = 0; i + 1 < state.items.size(); i += 2)
      if (state.items[i]->kind == Kind::string && state.items[i]->text == name) return state.items[i + 1];
    return nullptr;
  }
  std::uint64_t natural(const Value* v, const std::string& where) const {
    if (!v || v->kind != Kind::integer || v->integer < 0) bad(where + " is not a non-negative integer");
    return static_cast<std::uint64_t>(v->integer);
  }
  Shape shape(const Value* v, const std::string& where) const {
    if (!v || v->kind != Kind::tuple) bad(where + " is not a torch.Size");
    Shape s;
    for (const Value* d : v->items) s.push_back(natural(d, where));
    return s;
  }
  std::string text(const Value* v, const std::string& where) const {
    if (!v || v->kind != Kind::string) bad(where + " is not a string");
    return v->text;
  }
  const Value& dict(const Value* v, const std::string& where) const {
    if (!v || v->kind != Kind::dict) bad(where + " is not a dict");
    return *v;
  }

  // _StorageInfo(relative_path, offset, length[, transform_descriptors]).
  Storage storage(const Value* v, const std::string& where) const {
    const Value& s = object(v, "torch.distributed.checkpoint.filesystem._StorageInfo", where);
    Storage out;
    out.file = text(field(s, "relative_path"), where + "'s relative_path");
    if (out.file.empty() || out.file.find('/') != std::string::npos || out.file == "." || out.file == ".." ||
        out.file.find('\0') != std::string::npos)
      bad(where + " lies in '" + out.file + "', which is not a file name inside the folder");
    out.offset = natural(field(s, "offset"), where + "'s offset");
    out.length = natural(field(s, "length"), where + "'s length");
    const Value* transforms = field(s, "transform_descriptors");
    if (transforms && transforms->kind != Kind::none && !transforms->items.empty())
      bad(where + " was transformed by a storage extension (compressed); wavg reads plain chunks only");
    return out;
  }

  DType dtype(const Value& properties, const std::string& where) const {
    if (properties.kind != Kind::tuple || properties.items.size() < 5 || properties.items[0]->kind != Kind::global)
      bad(where + "'s properties are not (dtype, layout, requires_grad, memory_format, pin_memory)");
    const std::string& name = properties.items[0]->text;
    if (name.starts_with(k_torch)) {
      const std::string_view bare = std::string_view(name).substr(k_torch.size());
      if (const std::optional<DType> t = dtype_from_name(bare); t && dtype_name(*t) == bare) return *t;
    }
    bad(where + " has dtype " + name + ", which wavg does not read");
  }

  // TensorProperties' elements after the dtype (checked to be a tuple of five or more by dtype()). What is not of
  // the expected kind keeps its default: only a DCP output's fresh .metadata repeats these.
  static Properties rest_of(const Value& properties) {
    Properties out;
    const auto& v = properties.items;
    if (v[1]->kind == Kind::global) out.layout = v[1]->text;
    if (v[2]->kind == Kind::boolean) out.requires_grad = v[2]->boolean;
    if (v[3]->kind == Kind::object && v[3]->state && v[3]->state->kind == Kind::tuple &&
        v[3]->state->items.size() == 1 && v[3]->state->items[0]->kind == Kind::integer &&
        v[3]->state->items[0]->integer >= 0)
      out.memory_format = static_cast<std::uint64_t>(v[3]->state->items[0]->integer);
    if (v[4]->kind == Kind::boolean) out.pin_memory = v[4]->boolean;
    if (v.size() > 5) {
      out.has_strides = true;
      if (v[5]->kind == Kind::tuple) {
        Shape strides;
        for (const Value* d : v[5]->items)
          if (d->kind == Kind::integer && d->integer >= 0) strides.push_back(static_cast<std::uint64_t>(d->integer));
        if (strides.size() == v[5]->items.size()) out.strides = std::move(strides);
      }
    }
    return out;
  }

  // planner_data's value for one name: a tuple of keys and list indices, else an empty path.
  static std::vector<PathPart> planner_path(const Value* v) {
    std::vector<PathPart> path;
    if (!v || (v->kind != Kind::tuple && v->kind != Kind::list)) return path;
    for (const Value* part : v->items) {
      if (part->kind == Kind::string)
        path.push_back({false, 0, part->text});
      else if (part->kind == Kind::integer)
        path.push_back({true, part->integer, {}});
      else
        return {};
    }
    return path;
  }

  Item tensor(const std::string& name, const Value& meta) const {
    Item item;
    item.name = name;
    item.tensor = true;
    const Value& properties = object(field(meta, "properties"), std::string(k_module) + "TensorProperties", name);
    item.dtype = dtype(properties, "tensor " + name);
    item.properties = rest_of(properties);
    item.shape = shape(field(meta, "size"), "tensor " + name + "'s size");
    const Value* chunks = field(meta, "chunks");
    if (!chunks || chunks->kind != Kind::list) bad("tensor " + name + "'s chunks are not a list");
    for (const Value* c : chunks->items) {
      const Value& cm = object(c, std::string(k_module) + "ChunkStorageMetadata", "a chunk of tensor " + name);
      ChunkMeta chunk;
      chunk.offsets = shape(field(cm, "offsets"), "a chunk of tensor " + name + ": offsets");
      chunk.sizes = shape(field(cm, "sizes"), "a chunk of tensor " + name + ": sizes");
      item.chunks.push_back(std::move(chunk));
    }
    return item;
  }

 private:
  const std::string& m_file;
};

// The optimizer state dicts: the prefixes P of paths with P + "state" + ... under which some other path has
// P + "param_groups". Each item under one gets its role from its position and its key (see dcp.hpp). Paths are the
// names split at every dot: planner_data's keys hold dots themselves (a parameter's FQN, or torchtitan's flattened
// optimizer "state.layers.0.wq.weight.step"), so only the split finds "state" beside "param_groups" in both.
void assign_roles(std::vector<Item>& items) {
  std::set<std::vector<std::string>> with_groups;
  for (const Item& it : items)
    for (std::size_t i = 0; i < it.path.size(); ++i)
      if (it.path[i] == "param_groups") with_groups.emplace(it.path.begin(), it.path.begin() + i);
  for (Item& it : items) {
    if (!it.tensor) continue;
    for (std::size_t i = 0; i < it.path.size(); ++i) {
      if (it.path[i] != "state" && it.path[i] != "param_groups") continue;
      if (!with_groups.count(std::vector<std::string>(it.path.begin(), it.path.begin() + i))) continue;
      if (it.path[i] == "param_groups") it.role = Role::hyper_parameter;
      // The state's key, not its rank: a scalar parameter's moments are scalars too; `step` and the scalars
      // derived from it count (pytorch::is_step_scalar, as the .pt reader says).
      else
        it.role = pytorch::is_step_scalar(it.path.back()) ? Role::counter : Role::optimizer_state;
      break;
    }
  }
}

std::vector<std::string> split_name(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (std::size_t dot; (dot = name.find('.', begin)) != std::string::npos; begin = dot + 1)
    parts.push_back(name.substr(begin, dot - begin));
  parts.push_back(name.substr(begin));
  return parts;
}

}  // namespace

Metadata parse_metadata(const std::string& file, const unsigned char* data, std::size_t size) {
  const pytorch::Pickle pickle = pytorch::unpickle(file, data, size, value_names());
  Parser p(file);
  const Value& root = p.object(pickle.root, std::string(k_module) + "Metadata", "the pickle");
  const Value& entries = p.dict(p.field(root, "state_dict_metadata"), "state_dict_metadata");
  const Value* storage_data = p.field(root, "storage_data");
  const Value& storages = p.dict(storage_data, "storage_data");

  // storage_data's keys: MetadataIndex(fqn, offset) (index is only a hint, as in DCP's own lookup).
  std::map<std::pair<std::string, Shape>, Storage> where;
  for (std::size_t i = 0; i + 1 < storages.items.size(); i += 2) {
    const Value& key = p.object(storages.items[i], std::string(k_module) + "MetadataIndex", "a storage_data key");
    const std::string fqn = p.text(p.field(key, "fqn"), "a storage_data key's fqn");
    const Value* offset = p.field(key, "offset");
    const Shape at = offset && offset->kind != Kind::none ? p.shape(offset, fqn + "'s storage offset") : Shape{};
    if (!where.emplace(std::make_pair(fqn, at), p.storage(storages.items[i + 1], "the storage of " + fqn)).second)
      p.bad(fqn + " has two storages at offset " + shape_string(at));
  }
  // Every chunk has a storage of its own (a distinct (fqn, offsets) key): more chunks listed than storages is a
  // chunk listed twice, which the pickle's memo makes two bytes long. Counted before any chunk is built, so the
  // objects built per chunk stay within the storages, each of which takes tens of bytes of the pickle (a 6 MB
  // .metadata listing one chunk 3 million times reached 1.24 GB before its overlap was found).
  std::uint64_t listed = 0;
  for (std::size_t i = 1; i < entries.items.size(); i += 2) {
    const Value* meta = entries.items[i];
    if (const Value* chunks =
            meta && meta->kind == Kind::object && meta->state ? p.field(*meta->state, "chunks") : nullptr;
        chunks && chunks->kind == Kind::list)
      listed += chunks->items.size();
  }
  if (listed > where.size())
    p.bad("lists " + std::to_string(listed) + " tensor chunks but only " + std::to_string(where.size()) +
          " storages (a chunk listed twice)");
  Metadata out;
  std::vector<Item>& items = out.items;
  const Value* planner = p.field(root, "planner_data");
  out.planner_data = planner && planner->kind == Kind::dict;
  std::unordered_map<std::string_view, const Value*> planned;  // by name: one lookup per item, not a walk
  if (out.planner_data)
    for (std::size_t i = 0; i + 1 < planner->items.size(); i += 2)
      if (planner->items[i]->kind == Kind::string) planned.emplace(planner->items[i]->text, planner->items[i + 1]);
  if (const Value* version = p.field(root, "version"); version && version->kind == Kind::string)
    out.version = version->text;
  std::set<std::string> seen;
  for (std::size_t i = 0; i + 1 < entries.items.size(); i += 2) {
    const std::string name = p.text(entries.items[i], "a state_dict_metadata key");
    if (!seen.insert(name).second) p.bad("names " + name + " twice");
    const Value* meta = entries.items[i + 1];
    Item item;
    if (meta && meta->kind == Kind::object && meta->text == std::string(k_module) + "BytesStorageMetadata") {
      item.name = name;
      const auto it = where.find({name, Shape{}});
      if (it == where.end()) p.bad(name + " has no storage");
      item.where = it->second;
    } else {
      item = p.tensor(name, p.object(meta, std::string(k_module) + "TensorStorageMetadata", name));
      for (ChunkMeta& c : item.chunks) {
        const auto it = where.find({name, c.offsets});
        if (it == where.end())
          p.bad("the chunk of tensor " + name + " at offsets " + shape_string(c.offsets) + " has no storage");
        c.where = it->second;
      }
    }
    item.path = split_name(name);
    if (const auto it = planned.find(name); it != planned.end()) {
      item.planned = true;
      item.planner = Parser::planner_path(it->second);
    }
    items.push_back(std::move(item));
  }
  assign_roles(items);
  return out;
}

}  // namespace wavg::dcp
