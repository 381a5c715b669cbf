// Writing a DCP .metadata pickle (dcp_metadata.hpp): the objects torch.distributed.checkpoint pickles, each made as
// Python makes a dataclass, NEWOBJ(class, ()) then BUILD(its fields), with the opcodes of the .pt writer.

#include "dcp/dcp_metadata.hpp"
#include "pytorch/pickle_writer.hpp"
#include "wavg/error.hpp"

namespace wavg::dcp {

namespace {

using pytorch::pickle_bool;
using pytorch::pickle_global;
using pytorch::pickle_string;
using pytorch::pickle_tuple;
using pytorch::pickle_uint;

constexpr const char* k_module = "torch.distributed.checkpoint.metadata";

// Pushes a new object of class `module.name`, before its BUILD.
void new_object(std::string& p, const std::string& module, const std::string& name) {
  pickle_global(p, module, name);
  p += ")\x81";  // EMPTY_TUPLE, NEWOBJ
}
// torch.Size(values).
void size(std::string& p, const Shape& values) {
  pickle_global(p, "torch", "Size");
  pickle_tuple(p, values);
  p += "\x85R";  // TUPLE1, REDUCE
}
void integer(std::string& p, std::int64_t v) {
  if (v >= 0) return pickle_uint(p, static_cast<std::uint64_t>(v));
  p += 'I';  // INT, as text (appended piecewise: GCC 12 warns falsely about "I" + ... (-Wrestrict))
  p += std::to_string(v);
  p += '\n';
}

void properties(std::string& p, const Item& t) {
  new_object(p, k_module, "TensorProperties");
  p += '(';
  pickle_global(p, "torch", std::string(dtype_name(t.dtype)));
  pickle_global(p, "torch.serialization", "_get_layout");
  pickle_string(p, t.properties.layout);
  p += "\x85R";
  pickle_bool(p, t.properties.requires_grad);
  pickle_global(p, k_module, "_MEM_FORMAT_ENCODING");
  pickle_uint(p, t.properties.memory_format);
  p += "\x85R";
  pickle_bool(p, t.properties.pin_memory);
  if (t.properties.has_strides) {
    if (t.properties.strides)
      pickle_tuple(p, *t.properties.strides);
    else
      p += 'N';
  }
  p += "tb";  // TUPLE, BUILD: TensorProperties' __setstate__ takes the tuple
}

void tensor_metadata(std::string& p, const Item& t) {
  new_object(p, k_module, "TensorStorageMetadata");
  p += "}(";
  pickle_string(p, "properties");
  properties(p, t);
  pickle_string(p, "size");
  size(p, t.shape);
  pickle_string(p, "chunks");
  p += "](";
  for (const ChunkMeta& c : t.chunks) {
    new_object(p, k_module, "ChunkStorageMetadata");
    p += "}(";
    pickle_string(p, "offsets");
    size(p, c.offsets);
    pickle_string(p, "sizes");
    size(p, c.sizes);
    p += "ub";
  }
  p += "eub";  // APPENDS, SETITEMS, BUILD
}

// One storage_data entry: MetadataIndex(fqn, offset, index) -> _StorageInfo(relative_path, offset, length).
void storage(std::string& p, const std::string& fqn, const Shape* offsets, std::uint64_t index, const Storage& s) {
  new_object(p, k_module, "MetadataIndex");
  p += "}(";
  pickle_string(p, "fqn");
  pickle_string(p, fqn);
  pickle_string(p, "index");
  if (offsets) {
    pickle_uint(p, index);
    pickle_string(p, "offset");
    size(p, *offsets);
  } else {
    p += 'N';  // and no offset, as torch pickles a bytes value's key
  }
  p += "ub";
  new_object(p, "torch.distributed.checkpoint.filesystem", "_StorageInfo");
  p += "}(";
  pickle_string(p, "relative_path");
  pickle_string(p, s.file);
  pickle_string(p, "offset");
  pickle_uint(p, s.offset);
  pickle_string(p, "length");
  pickle_uint(p, s.length);
  p += "ub";
}

}  // namespace

std::string metadata_pickle(const Metadata& meta, const std::string& display) {
  std::string p = "\x80\x02";
  new_object(p, k_module, "Metadata");
  p += "}(";
  pickle_string(p, "state_dict_metadata");
  p += "}(";
  for (const Item& it : meta.items) {
    pickle_string(p, it.name);
    if (it.tensor)
      tensor_metadata(p, it);
    else
      new_object(p, k_module, "BytesStorageMetadata");
  }
  p += 'u';
  pickle_string(p, "planner_data");
  if (meta.planner_data) {
    p += "}(";
    for (const Item& it : meta.items) {
      // torch's loaders without a state dict (dcp_to_torch_save) rebuild the nesting from these paths.
      if (it.planner.empty())
        fail(display, it.name +
                          ": input 1's .metadata gives no planner_data path of keys for it, which a fresh "
                          ".metadata must repeat");
      pickle_string(p, it.name);
      p += '(';
      for (const PathPart& part : it.planner)
        if (part.index)
          integer(p, part.number);
        else
          pickle_string(p, part.key);
      p += 't';
    }
    p += 'u';
  } else {
    p += 'N';
  }
  pickle_string(p, "storage_data");
  p += "}(";
  for (const Item& it : meta.items) {
    if (!it.tensor) storage(p, it.name, nullptr, 0, it.where);
    for (std::size_t c = 0; c < it.chunks.size(); ++c)
      storage(p, it.name, &it.chunks[c].offsets, c, it.chunks[c].where);
  }
  p += 'u';
  pickle_string(p, "storage_meta");
  p += 'N';
  if (meta.version) {
    pickle_string(p, "version");
    pickle_string(p, *meta.version);
  }
  p += "ub.";
  return p;
}

}  // namespace wavg::dcp
