// Writing a DCP .metadata pickle (dcp_metadata.hpp): the objects torch.distributed.checkpoint pickles, each made as
// Python makes a dataclass, NEWOBJ(class, ()) then BUILD(its fields), with the opcodes of the .pt writer.

#include <unordered_map>

#include "dcp/dcp_metadata.hpp"
#include "pytorch/pickle_writer.hpp"
#include "wavg/error.hpp"

namespace wavg::dcp {

namespace {

using pytorch::pickle_bool;
using pytorch::pickle_string;
using pytorch::pickle_tuple;
using pytorch::pickle_uint;

constexpr const char* k_module = "torch.distributed.checkpoint.metadata";

// The pickle, with the globals and field names memoized as Python's pickler does (a .metadata of many tensors
// names each class and field once, not once per object).
struct Out {
  std::string s;
  std::unordered_map<std::string, std::uint32_t> memo;

  void global(const std::string& module, const std::string& name) {
    once('g' + module + '\n' + name, [&] { pytorch::pickle_global(s, module, name); });
  }
  void key(const std::string& text) {
    once('s' + text, [&] { pickle_string(s, text); });
  }

 private:
  // Emits the value the first time and memoizes it (BINPUT, LONG_BINPUT); later, gets it (BINGET, LONG_BINGET).
  template <class F>
  void once(const std::string& id, F emit) {
    const auto [it, fresh] = memo.emplace(id, static_cast<std::uint32_t>(memo.size()));
    if (fresh) emit();
    const std::uint32_t i = it->second;
    s += fresh ? (i < 256 ? 'q' : 'r') : (i < 256 ? 'h' : 'j');
    for (int b = 0; b < (i < 256 ? 1 : 4); ++b) s += static_cast<char>((i >> (8 * b)) & 0xff);
  }
};

// Pushes a new object of class `module.name`, before its BUILD.
void new_object(Out& p, const std::string& module, const std::string& name) {
  p.global(module, name);
  p.s += ")\x81";  // EMPTY_TUPLE, NEWOBJ
}
// torch.Size(values).
void size(Out& p, const Shape& values) {
  p.global("torch", "Size");
  pickle_tuple(p.s, values);
  p.s += "\x85R";  // TUPLE1, REDUCE
}
void integer(Out& p, std::int64_t v) {
  if (v >= 0) return pickle_uint(p.s, static_cast<std::uint64_t>(v));
  p.s += 'I';  // INT, as text (appended piecewise: GCC 12 warns falsely about "I" + ... (-Wrestrict))
  p.s += std::to_string(v);
  p.s += '\n';
}

void properties(Out& p, const Item& t) {
  new_object(p, k_module, "TensorProperties");
  p.s += '(';
  p.global("torch", std::string(dtype_name(t.dtype)));
  p.global("torch.serialization", "_get_layout");
  p.key(t.properties.layout);
  p.s += "\x85R";
  pickle_bool(p.s, t.properties.requires_grad);
  p.global(k_module, "_MEM_FORMAT_ENCODING");
  pickle_uint(p.s, t.properties.memory_format);
  p.s += "\x85R";
  pickle_bool(p.s, t.properties.pin_memory);
  if (t.properties.has_strides) {
    if (t.properties.strides)
      pickle_tuple(p.s, *t.properties.strides);
    else
      p.s += 'N';
  }
  p.s += "tb";  // TUPLE, BUILD: TensorProperties' __setstate__ takes the tuple
}

void tensor_metadata(Out& p, const Item& t) {
  new_object(p, k_module, "TensorStorageMetadata");
  p.s += "}(";
  p.key("properties");
  properties(p, t);
  p.key("size");
  size(p, t.shape);
  p.key("chunks");
  p.s += "](";
  for (const ChunkMeta& c : t.chunks) {
    new_object(p, k_module, "ChunkStorageMetadata");
    p.s += "}(";
    p.key("offsets");
    size(p, c.offsets);
    p.key("sizes");
    size(p, c.sizes);
    p.s += "ub";
  }
  p.s += "eub";  // APPENDS, SETITEMS, BUILD
}

// One storage_data entry: MetadataIndex(fqn, offset, index) -> _StorageInfo(relative_path, offset, length).
void storage(Out& p, const std::string& fqn, const Shape* offsets, std::uint64_t index, const Storage& s) {
  new_object(p, k_module, "MetadataIndex");
  p.s += "}(";
  p.key("fqn");
  pickle_string(p.s, fqn);
  p.key("index");
  if (offsets) {
    pickle_uint(p.s, index);
    p.key("offset");
    size(p, *offsets);
  } else {
    p.s += 'N';  // and no offset, as torch pickles a bytes value's key
  }
  p.s += "ub";
  new_object(p, "torch.distributed.checkpoint.filesystem", "_StorageInfo");
  p.s += "}(";
  p.key("relative_path");
  p.key(s.file);
  p.key("offset");
  pickle_uint(p.s, s.offset);
  p.key("length");
  pickle_uint(p.s, s.length);
  p.s += "ub";
}

}  // namespace

std::string metadata_pickle(const Metadata& meta, const std::string& display) {
  Out p;
  p.s = "\x80\x02";
  new_object(p, k_module, "Metadata");
  p.s += "}(";
  p.key("state_dict_metadata");
  p.s += "}(";
  for (const Item& it : meta.items) {
    pickle_string(p.s, it.name);
    if (it.tensor)
      tensor_metadata(p, it);
    else
      new_object(p, k_module, "BytesStorageMetadata");
  }
  p.s += 'u';
  p.key("planner_data");
  if (meta.planner_data) {
    p.s += "}(";
    for (const Item& it : meta.items) {
      // torch's loaders without a state dict (dcp_to_torch_save) rebuild the nesting from these paths.
      if (!it.planned) continue;
      if (it.planner.empty())
        fail(display,
             it.name +
                 ": input 1's .metadata gives a planner_data entry for it that is not a path of keys, which a fresh "
                 ".metadata must repeat");
      pickle_string(p.s, it.name);
      p.s += '(';
      for (const PathPart& part : it.planner)
        if (part.index)
          integer(p, part.number);
        else
          pickle_string(p.s, part.key);
      p.s += 't';
    }
    p.s += 'u';
  } else {
    p.s += 'N';
  }
  p.key("storage_data");
  p.s += "}(";
  for (const Item& it : meta.items) {
    if (!it.tensor) storage(p, it.name, nullptr, 0, it.where);
    for (std::size_t c = 0; c < it.chunks.size(); ++c)
      storage(p, it.name, &it.chunks[c].offsets, c, it.chunks[c].where);
  }
  p.s += 'u';
  p.key("storage_meta");
  p.s += 'N';
  if (meta.version) {
    p.key("version");
    pickle_string(p.s, *meta.version);
  }
  p.s += "ub.";
  return std::move(p.s);
}

}  // namespace wavg::dcp
