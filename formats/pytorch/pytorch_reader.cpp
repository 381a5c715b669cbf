// Reading torch.save files (layouts in pytorch.hpp): find the pickles and the storages, unpickle with the
// restricted unpickler, name the tensors by their key paths, and serve their elements from the mapping.

#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

#include "pytorch/optim_state.hpp"
#include "pytorch/pytorch.hpp"
#include "unknown_kind.hpp"
#include "wavg/error.hpp"
#include "wavg/mapped_ranges.hpp"

namespace wavg::pytorch {

namespace {

// The legacy format's first pickle: protocol 2, LONG1 of 10 bytes, the magic number 0x1950a86a20f9469cfc6c.
constexpr unsigned char k_legacy_magic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46,
                                            0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, '.'};
constexpr int k_max_depth = 64;
// Values visited while naming: a pickle may reference one container from many places (a DAG), which a walk would
// expand exponentially; real checkpoints visit each value about once.
constexpr std::uint64_t k_max_visits = 10'000'000;
// The most bytes views that repeat elements add to an output beyond the file's size (see add_tensor).
constexpr std::uint64_t k_max_expanded = 64ull << 20;

std::string join(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

std::string last_key(const std::string& name) {
  const auto dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

// Tells whether a dict is a torch.optim optimizer's state_dict: {"state": {...}, "param_groups": [...]}.
bool is_optimizer_state_dict(const Value& v) {
  bool state = false, groups = false;
  for (std::size_t i = 0; i + 1 < v.items.size(); i += 2) {
    const Value& key = *v.items[i];
    if (key.kind != Kind::string) continue;
    state = state || (key.text == "state" && v.items[i + 1]->kind == Kind::dict);
    groups = groups || (key.text == "param_groups" && v.items[i + 1]->kind == Kind::list);
  }
  return state && groups;
}

}  // namespace

bool looks_like_pytorch(const SniffInput& input) {
  const unsigned char* head = input.bytes().data();
  const std::size_t n = std::min<std::size_t>(input.bytes().size(), 30 + 256);
  if (n >= sizeof k_legacy_magic && std::memcmp(head, k_legacy_magic, sizeof k_legacy_magic) == 0) return true;
  if (n < 30 || std::memcmp(head, "PK\x03\x04", 4) != 0) return false;
  const std::size_t name_len = head[26] | (head[27] << 8);
  if (name_len > n - 30) return false;
  const std::string first(reinterpret_cast<const char*>(head + 30), name_len);
  const auto slash = first.find('/');
  return slash != std::string::npos && first.substr(slash) == "/data.pkl";
}

PytorchReader::PytorchReader(std::string path) : ListedReader(path, FormatId::pytorch), m_file(std::move(path)) {
  if (m_file.size() >= sizeof k_legacy_magic && std::memcmp(m_file.data(), k_legacy_magic, sizeof k_legacy_magic) == 0)
    open_legacy();
  else
    open_zip();
}

void PytorchReader::open_zip() {
  m_container = Container::zip;
  m_entries = read_zip_directory(path(), m_file.data(), m_file.size());
  const ZipEntry* pkl = nullptr;
  for (const ZipEntry& e : m_entries) {
    if (is_torchscript_entry(e.name)) refuse(path(), torchscript_kind());
    const auto slash = e.name.find('/');
    if (slash != std::string::npos && e.name.substr(slash) == "/data.pkl") {
      if (pkl) refuse(path(), "the archive holds two data.pkl entries");
      pkl = &e;
      m_top = e.name.substr(0, slash);
    }
  }
  if (!pkl) refuse(path(), "a zip archive without TOP/data.pkl is not a torch.save file");
  IndexTable names;  // m_entries by name
  names.reserve(m_entries.size());
  m_storages.reserve(m_entries.size());
  m_storage_keys.reserve(m_entries.size());
  const std::string folder = m_top + "/";
  for (std::size_t i = 0; i < m_entries.size(); ++i) {
    const ZipEntry& e = m_entries[i];
    if (e.name.rfind(folder, 0) != 0) refuse(path(), e.name + ": entry outside the archive's folder " + m_top);
    const auto same_name = [&](std::uint32_t j) { return m_entries[j].name == e.name; };
    if (names.find_or_insert(hash_bytes(e.name), static_cast<std::uint32_t>(i), same_name) != IndexTable::k_none)
      refuse(path(), e.name + ": the entry appears twice");
    const std::string_view rest = std::string_view(e.name).substr(m_top.size() + 1);
    const auto text = [&] { return std::string(reinterpret_cast<const char*>(m_file.data() + e.data_offset), e.size); };
    if (rest.rfind("data/", 0) == 0)
      add_storage({std::string(rest.substr(5)), i, e.data_offset, e.size});
    else if (rest == "byteorder" && text() != "little")
      refuse(path(), "big-endian checkpoints are not supported");
    else if (rest == "version" && e.size <= 16)
      m_metadata["pytorch_version"] = text().substr(0, text().find('\n'));
    else if (rest == "wavg.json" && e.size <= (1u << 20)) {
      const auto j = nlohmann::json::parse(text(), nullptr, false);
      if (j.is_object())
        for (auto it = j.begin(); it != j.end(); ++it)
          if (it.value().is_string()) m_metadata[it.key()] = it.value().get<std::string>();
    }
  }
  m_pickles.push_back(unpickle(path(), m_file.data() + pkl->data_offset, pkl->size));
  name_tensors(*m_pickles.back().root);
}

void PytorchReader::open_legacy() {
  m_container = Container::legacy;
  const unsigned char* data = m_file.data();
  std::uint64_t at = 0;
  for (int i = 0; i < 5; ++i) {
    if (at == m_file.size())
      refuse(path(), "a legacy torch.save file cut short: it ends after " + std::to_string(i) + " of its 5 pickles (" +
                         std::to_string(at) + " bytes)");
    m_pickles.push_back(unpickle(path(), data + at, m_file.size() - at));
    at += m_pickles.back().consumed;
  }
  const Value& version = *m_pickles[1].root;
  if (version.kind != Kind::integer || version.integer != 1001)
    refuse(path(), "legacy torch.save protocol " + describe(version) + " is not 1001");
  const Value& info = *m_pickles[2].root;
  for (std::size_t i = 0; info.kind == Kind::dict && i + 1 < info.items.size(); i += 2)
    if (info.items[i]->text == "little_endian" &&
        !(info.items[i + 1]->kind == Kind::boolean && info.items[i + 1]->boolean))
      refuse(path(), "big-endian checkpoints are not supported");
  // The storages' element types come from the persistent ids that name them (an UntypedStorage's record counts bytes).
  std::map<std::string, std::size_t> types;  // each storage's element size (a complex number's two parts)
  m_pickles[3].arena.for_each([&](const Value& v) {
    if (v.kind == Kind::storage)
      types.emplace(v.storage->key, v.storage->untyped ? 1 : dtype_size(v.storage->dtype) * (v.storage->complex ? 2 : 1));
  });
  const Value& keys = *m_pickles[4].root;
  if (keys.kind != Kind::list) refuse(path(), "the legacy storage list is not a list");
  for (const Value* key : keys.items) {
    if (key->kind != Kind::string) refuse(path(), "the legacy storage list holds a " + describe(*key));
    const auto type = types.find(key->text);
    if (type == types.end()) refuse(path(), "storage " + key->text + " is listed but no tensor uses it");
    if (!m_file.contains(at, 8)) refuse(path(), "storage " + key->text + ": truncated before its size");
    std::uint64_t numel = 0;
    for (int b = 7; b >= 0; --b) numel = (numel << 8) | data[at + static_cast<unsigned>(b)];
    at += 8;
    const std::size_t elem = type->second;
    if (numel > (m_file.size() - at) / elem)
      refuse(path(),
             "storage " + key->text + " of " + std::to_string(numel) + " elements runs past the end of the file");
    if (!add_storage({key->text, 0, at, numel * elem})) refuse(path(), "storage " + key->text + " is listed twice");
    at += numel * elem;
  }
  m_metadata["pytorch_version"] = "legacy 1001";
  name_tensors(*m_pickles[3].root);
}

bool PytorchReader::add_storage(StorageData data) {
  const std::uint64_t hash = hash_bytes(data.key);
  const auto same = [&](std::uint32_t i) { return m_storages[i].key == data.key; };
  if (m_storage_keys.find(hash, same) != IndexTable::k_none) return false;
  m_storage_keys.insert(hash, static_cast<std::uint32_t>(m_storages.size()));
  m_storages.push_back(std::move(data));
  return true;
}

PytorchReader::StorageData* PytorchReader::find_storage(const std::string& key) {
  const std::uint32_t i =
      m_storage_keys.find(hash_bytes(key), [&](std::uint32_t j) { return m_storages[j].key == key; });
  return i == IndexTable::k_none ? nullptr : &m_storages[i];
}

std::string PytorchReader::layout() const {
  return std::string(m_container == Container::zip ? "PyTorch zip " : "PyTorch legacy ") + m_shape;
}

void PytorchReader::name_tensors(const Value& root) {
  walk(root, "", 0);
  m_shape = m_whole_model                                                                      ? "whole model"
            : m_kept.empty() || (m_kept.size() == 1 && m_kept[0].rfind("_metadata (", 0) == 0) ? "state_dict"
                                                                                               : "checkpoint";
}

bool PytorchReader::holds_tensor(const Value& v, int depth) {
  if (++m_visits > k_max_visits) refuse(path(), "the pickle references its containers too many times to walk");
  if (v.kind == Kind::tensor) return true;
  if (depth > k_max_depth) return true;  // deeper than a walk goes: walk() refuses it by name
  // Each value is looked into once (a pickle's values form a graph: a value reached again, or a cycle, costs one
  // lookup), so the work is linear in the pickle's size.
  const auto [it, first] = m_holds.emplace(&v, false);
  if (!first) return it->second;
  bool holds = false;
  for (std::size_t i = 0; i < v.items.size() && !holds; ++i) holds = holds_tensor(*v.items[i], depth + 1);
  m_holds[&v] = holds;
  return holds;
}

void PytorchReader::walk(const Value& v, const std::string& name, int depth) {
  if (++m_visits > k_max_visits) refuse(path(), "the pickle references its containers too many times to walk");
  if (depth > k_max_depth) refuse(path(), (name.empty() ? "the object" : name) + " nests deeper than 64 levels");
  if (v.kind == Kind::dict || v.kind == Kind::list || v.kind == Kind::tuple || v.kind == Kind::object) {
    // A container reached again by another path (the pickle's memo shares it) is named once: one that holds
    // tensors is refused (which name would they have?), one without is noted; so the walk is linear, not the
    // number of paths through a graph of shared dicts.
    const auto [it, first] = m_reached.emplace(&v, name);
    if (!first) {
      const std::string shown = name.empty() ? "the object" : name;
      const std::string before = it->second.empty() ? "the object" : it->second;
      if (holds_tensor(v, depth) || (v.state && holds_tensor(*v.state, depth)))
        refuse(path(), shown + ": the pickle reaches the container of " + before +
                           " again; wavg reads each container of tensors under one name");
      m_kept.push_back(shown + " (the same " + describe(v) + " as " + before + ")");
      return;
    }
  }
  switch (v.kind) {
    case Kind::tensor: add_tensor(v, name.empty() ? "tensor" : name); return;
    case Kind::object: walk_object(v, name, depth); return;
    case Kind::dict: {
      const bool optimizer = is_optimizer_state_dict(v);
      for (std::size_t i = 0; i + 1 < v.items.size(); i += 2) {
        const Value& key = *v.items[i];
        std::string k;
        if (key.kind == Kind::string)
          k = key.text;
        else if (key.kind == Kind::integer)
          k = std::to_string(key.integer);
        else
          refuse(path(), (name.empty() ? "the object" : name) + ": a dict key is a " + describe(key) +
                             ", not a string or integer");
        const Role outer = m_role;
        if (optimizer && k == "state") m_role = Role::optimizer_state;
        if (optimizer && k == "param_groups") m_role = Role::hyper_parameter;
        walk(*v.items[i + 1], join(name, k), depth + 1);
        m_role = outer;
      }
      // An OrderedDict's attributes: a state_dict's _metadata (module versions), kept as a whole.
      if (v.state && v.state->kind == Kind::dict)
        for (std::size_t i = 0; i + 1 < v.state->items.size(); i += 2)
          m_kept.push_back(join(name, v.state->items[i]->text) + " (" + describe(*v.state->items[i + 1]) +
                           ", an attribute)");
      else if (v.state)
        m_kept.push_back((name.empty() ? "the object" : name) + "'s attributes (" + describe(*v.state) + ")");
      return;
    }
    case Kind::list:
    case Kind::tuple:
      if (holds_tensor(v, depth)) {
        for (std::size_t i = 0; i < v.items.size(); ++i) walk(*v.items[i], join(name, std::to_string(i)), depth + 1);
        return;
      }
      [[fallthrough]];
    default: m_kept.push_back((name.empty() ? "the object" : name) + " (" + describe(v) + ")");
  }
}

// A whole model's object (torch.save(model)): a module's parameters, buffers and submodules are named as its
// state_dict names them (conv1.weight: the members of _parameters, _buffers and _modules join the module's own
// name), then its other attributes by attribute path, kept unless they hold tensors. A tensor those attributes
// hold again (an LSTM's _flat_weights lists its parameters) is the same value and is not named twice.
void PytorchReader::walk_object(const Value& v, const std::string& name, int depth) {
  m_whole_model = true;
  const std::string shown = name.empty() ? "the model" : name;
  if (!v.state || v.state->kind != Kind::dict) {
    m_kept.push_back(shown + " (" + describe(v) + (v.state ? ", attributes " + describe(*v.state) : "") + ")");
    return;
  }
  const auto& items = v.state->items;
  const auto key_of = [&](std::size_t i) -> const std::string& {
    if (items[i]->kind != Kind::string) refuse(path(), shown + ": an attribute name is a " + describe(*items[i]));
    return items[i]->text;
  };
  const auto flattened = [&](std::size_t i) {
    const std::string& k = key_of(i);
    return (k == "_parameters" || k == "_buffers" || k == "_modules") && items[i + 1]->kind == Kind::dict;
  };
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    if (!flattened(i)) continue;
    const Role outer = m_role;
    if (key_of(i) != "_modules") m_role = key_of(i) == "_parameters" ? Role::weight : Role::buffer;
    walk(*items[i + 1], name, depth + 1);
    m_role = outer;
  }
  ++m_attributes;
  for (std::size_t i = 0; i + 1 < items.size(); i += 2)
    if (!flattened(i)) walk(*items[i + 1], join(name, key_of(i)), depth + 1);
  --m_attributes;
}

// The role the walk's structure gives a tensor named `name`: torch.optim keeps the per-parameter step count as
// state[i]["step"] (and scalars derived from it, pytorch::is_step_scalar) and torch.nn's batch norm its count as the
// buffer num_batches_tracked.
Role PytorchReader::role_here(const std::string& name) const {
  const std::string key = last_key(name);
  if (m_role == Role::optimizer_state && pytorch::is_step_scalar(key)) return Role::counter;
  if (m_role == Role::buffer && key == "num_batches_tracked") return Role::counter;
  return m_role;
}

void PytorchReader::add_tensor(const Value& v, const std::string& name) {
  if (v.seen && m_attributes > 0) return;
  v.seen = true;
  const std::uint64_t name_hash = hash_bytes(name);
  if (m_names.find(name_hash, [&](std::uint32_t i) { return m_tensors[i].name == name; }) != IndexTable::k_none)
    refuse(path(), name + ": two tensors have this name");
  const TensorRef& t = *v.tensor;
  const StorageRef& s = *t.storage->storage;
  StorageData* storage = find_storage(s.key);
  if (!storage) refuse(path(), name + ": its storage " + s.key + " is not in the file");
  const std::uint64_t elem = dtype_size(s.dtype), available = storage->bytes / elem;
  // The unpickler checked the view against numel; numel (after a legacy view's offset) against the bytes here.
  if (s.numel > available || s.view_offset > available - s.numel)
    refuse(path(), name + ": storage " + s.key + " holds " + std::to_string(available) +
                       " elements, the tensor's view needs " + std::to_string(s.view_offset + s.numel));
  // Views that repeat elements (stride 0: 10^9 elements over 4; one storage viewed thousands of times) are as many
  // elements in the output as they claim. Beyond the storages they view, a file's tensors may come to its own size
  // (tied weights: two tensors over one storage) plus k_max_expanded, as HDF5's unwritten datasets may.
  TensorInfo info{name, s.dtype, t.shape};
  if (s.complex) info.numbers = Numbers::complex;  // its shape ends in the parts' 2 (rebuild_tensor)
  const std::uint64_t bytes = info.bytes();  // checked against overflow by unpickle
  m_tensor_bytes = bytes > UINT64_MAX - m_tensor_bytes ? UINT64_MAX : m_tensor_bytes + bytes;
  if (!storage->viewed) m_storage_bytes += storage->bytes;
  storage->viewed = true;
  if (m_tensor_bytes > m_storage_bytes + m_file.size() + k_max_expanded)
    refuse(path(), name + ": the tensors so far come to " + std::to_string(m_tensor_bytes) + " bytes over " +
                       std::to_string(m_storage_bytes) + " bytes of storage (views that repeat elements, such as an " +
                       "expanded tensor); wavg reads at most the file's size plus " +
                       std::to_string(k_max_expanded >> 20) + " MiB beyond the storages");
  Placement p;
  p.entry = storage->entry;
  p.begin = storage->offset + (s.view_offset + t.offset) * elem;
  p.stride = t.stride;
  std::uint64_t expected = 1;
  for (std::size_t d = t.shape.size(); d-- > 0;) {
    if (t.shape[d] != 1 && t.stride[d] != expected) p.contiguous = false;
    expected *= t.shape[d];
  }
  info.role = role_here(name);
  // A view is its storage, element offset, dtype, shape and stride.
  const ViewKey key{static_cast<std::uint32_t>(storage - m_storages.data()), s.view_offset + t.offset};
  std::uint64_t view_hash =
      hash_mix(hash_mix(hash_mix(0, key.storage), key.offset), static_cast<std::uint64_t>(s.dtype));
  for (std::size_t d = 0; d < t.shape.size(); ++d) view_hash = hash_mix(hash_mix(view_hash, t.shape[d]), t.stride[d]);
  const auto same_view = [&](std::uint32_t i) {
    return m_view_keys[i].storage == key.storage && m_view_keys[i].offset == key.offset &&
           m_tensors[i].dtype == s.dtype && m_tensors[i].shape == t.shape && m_placements[i].stride == t.stride;
  };
  const auto index = static_cast<std::uint32_t>(m_tensors.size());
  if (const std::uint32_t first = m_views.find_or_insert(view_hash, index, same_view); first != IndexTable::k_none) {
    info.role = Role::alias;
    info.alias_of = m_tensors[first].name;
  }
  m_names.insert(name_hash, index);
  m_view_keys.push_back(key);
  m_tensors.push_back(std::move(info));
  m_placements.push_back(std::move(p));
}

void PytorchReader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  const TensorInfo& t = m_tensors[index];
  const Placement& p = m_placements[index];
  WAVG_ASSERT(offset + count <= t.count());
  const std::size_t elem = dtype_size(t.dtype);
  if (p.contiguous) {
    std::memcpy(dst, m_file.data() + p.begin + offset * elem, count * elem);
    return;
  }
  auto* out = static_cast<unsigned char*>(dst);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t flat = offset + i, at = 0;
    for (std::size_t d = t.shape.size(); d-- > 0;) {
      at += (flat % t.shape[d]) * p.stride[d];
      flat /= t.shape[d];
    }
    std::memcpy(out + i * elem, m_file.data() + p.begin + at * elem, elem);
  }
}

const void* PytorchReader::view(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const Placement& p = m_placements[index];
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  WAVG_ASSERT(offset + count <= m_tensors[index].count());
  const std::uint64_t at = p.begin + offset * elem;
  return p.contiguous ? m_file.data() + at : nullptr;
}

void PytorchReader::release(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const Placement& p = m_placements[index];
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  if (p.contiguous) m_file.release(p.begin + offset * elem, p.begin + (offset + count) * elem);
}

void PytorchReader::prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  const Placement& p = m_placements[index];
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  if (p.contiguous) m_file.prefetch(p.begin + offset * elem, p.begin + (offset + count) * elem);
}

}  // namespace wavg::pytorch
