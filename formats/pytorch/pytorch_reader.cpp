// Reading torch.save files (layouts in pytorch.hpp): find the pickles and the storages, unpickle with the
// restricted unpickler, name the tensors by their key paths, and serve their elements from the mapping.

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "pytorch/pytorch.hpp"
#include "wavg/error.hpp"
#include "wavg/mapped_ranges.hpp"

namespace wavg::pytorch {

namespace {

// The legacy format's first pickle: protocol 2, LONG1 of 10 bytes, the magic number 0x1950a86a20f9469cfc6c.
constexpr unsigned char k_legacy_magic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9,
                                            0x20, 0x6a, 0xa8, 0x50, 0x19, '.'};
constexpr int k_max_depth = 64;
// Values visited while naming: a pickle may reference one container from many places (a DAG), which a walk would
// expand exponentially; real checkpoints visit each value about once.
constexpr std::uint64_t k_max_visits = 10'000'000;

std::string join(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

}  // namespace

bool looks_like_pytorch(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char head[30 + 256] = {};
  in.read(reinterpret_cast<char*>(head), sizeof head);
  const auto n = static_cast<std::size_t>(in.gcount());
  if (n >= sizeof k_legacy_magic && std::memcmp(head, k_legacy_magic, sizeof k_legacy_magic) == 0) return true;
  if (n < 30 || std::memcmp(head, "PK\x03\x04", 4) != 0) return false;
  const std::size_t name_len = head[26] | (head[27] << 8);
  if (name_len > n - 30) return false;
  const std::string first(reinterpret_cast<const char*>(head + 30), name_len);
  const auto slash = first.find('/');
  return slash != std::string::npos && first.substr(slash) == "/data.pkl";
}

PytorchReader::PytorchReader(std::string path) : ListedReader(path, FormatId::pytorch), m_file(std::move(path)) {
  if (m_file.size() >= sizeof k_legacy_magic &&
      std::memcmp(m_file.data(), k_legacy_magic, sizeof k_legacy_magic) == 0)
    open_legacy();
  else
    open_zip();
}

void PytorchReader::open_zip() {
  m_container = Container::zip;
  m_entries = read_zip_directory(path(), m_file.data(), m_file.size());
  const ZipEntry* pkl = nullptr;
  for (const ZipEntry& e : m_entries) {
    const auto slash = e.name.find('/');
    if (slash != std::string::npos && e.name.substr(slash) == "/data.pkl") {
      if (pkl) refuse(path(), "the archive holds two data.pkl entries");
      pkl = &e;
      m_top = e.name.substr(0, slash);
    }
  }
  if (!pkl) refuse(path(), "a zip archive without TOP/data.pkl is not a torch.save file");
  std::set<std::string> names;
  for (std::size_t i = 0; i < m_entries.size(); ++i) {
    const ZipEntry& e = m_entries[i];
    if (e.name.rfind(m_top + "/", 0) != 0) refuse(path(), e.name + ": entry outside the archive's folder " + m_top);
    if (!names.insert(e.name).second) refuse(path(), e.name + ": the entry appears twice");
    const std::string rest = e.name.substr(m_top.size() + 1);
    const auto text = [&] { return std::string(reinterpret_cast<const char*>(m_file.data() + e.data_offset), e.size); };
    if (rest.rfind("data/", 0) == 0) m_storages[rest.substr(5)] = {i, e.data_offset, e.size};
    else if (rest == "byteorder" && text() != "little") refuse(path(), "big-endian checkpoints are not supported");
    else if (rest == "version" && e.size <= 16) m_metadata["pytorch_version"] = text().substr(0, text().find('\n'));
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
    m_pickles.push_back(unpickle(path(), data + at, m_file.size() - at));
    at += m_pickles.back().consumed;
  }
  const Value& version = *m_pickles[1].root;
  if (version.kind != Kind::integer || version.integer != 1001)
    refuse(path(), "legacy torch.save protocol " + describe(version) + " is not 1001");
  const Value& info = *m_pickles[2].root;
  for (std::size_t i = 0; info.kind == Kind::dict && i + 1 < info.items.size(); i += 2)
    if (info.items[i]->text == "little_endian" && !(info.items[i + 1]->kind == Kind::boolean && info.items[i + 1]->boolean))
      refuse(path(), "big-endian checkpoints are not supported");
  // The storages' element types come from the persistent ids that name them.
  std::map<std::string, DType> types;
  for (const auto& v : m_pickles[3].arena)
    if (v->kind == Kind::storage) types.emplace(v->storage.key, v->storage.dtype);
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
    const std::size_t elem = dtype_size(type->second);
    if (numel > (m_file.size() - at) / elem)
      refuse(path(), "storage " + key->text + " of " + std::to_string(numel) + " elements runs past the end of the file");
    if (!m_storages.emplace(key->text, StorageData{0, at, numel * elem}).second)
      refuse(path(), "storage " + key->text + " is listed twice");
    at += numel * elem;
  }
  m_metadata["pytorch_version"] = "legacy 1001";
  name_tensors(*m_pickles[3].root);
}

std::string PytorchReader::layout() const {
  return std::string(m_container == Container::zip ? "PyTorch zip " : "PyTorch legacy ") + m_shape;
}

void PytorchReader::name_tensors(const Value& root) {
  walk(root, "", 0);
  m_shape = m_whole_model ? "whole model"
            : m_kept.empty() || (m_kept.size() == 1 && m_kept[0].rfind("_metadata (", 0) == 0) ? "state_dict"
                                                                                               : "checkpoint";
}

bool PytorchReader::holds_tensor(const Value& v, int depth) {
  if (++m_visits > k_max_visits) refuse(path(), "the pickle references its containers too many times to walk");
  if (v.kind == Kind::tensor) return true;
  if (depth > k_max_depth) return false;
  for (const Value* item : v.items)
    if (holds_tensor(*item, depth + 1)) return true;
  return false;
}

void PytorchReader::walk(const Value& v, const std::string& name, int depth) {
  if (++m_visits > k_max_visits) refuse(path(), "the pickle references its containers too many times to walk");
  if (depth > k_max_depth) refuse(path(), (name.empty() ? "the object" : name) + " nests deeper than 64 levels");
  switch (v.kind) {
    case Kind::tensor: add_tensor(v, name.empty() ? "tensor" : name); return;
    case Kind::object: walk_object(v, name, depth); return;
    case Kind::dict:
      for (std::size_t i = 0; i + 1 < v.items.size(); i += 2) {
        const Value& key = *v.items[i];
        std::string k;
        if (key.kind == Kind::string) k = key.text;
        else if (key.kind == Kind::integer) k = std::to_string(key.integer);
        else refuse(path(), (name.empty() ? "the object" : name) + ": a dict key is a " + describe(key) + ", not a string or integer");
        walk(*v.items[i + 1], join(name, k), depth + 1);
      }
      // An OrderedDict's attributes: a state_dict's _metadata (module versions), kept as a whole.
      if (v.state && v.state->kind == Kind::dict)
        for (std::size_t i = 0; i + 1 < v.state->items.size(); i += 2)
          m_kept.push_back(join(name, v.state->items[i]->text) + " (" + describe(*v.state->items[i + 1]) + ", an attribute)");
      else if (v.state)
        m_kept.push_back((name.empty() ? "the object" : name) + "'s attributes (" + describe(*v.state) + ")");
      return;
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
  for (std::size_t i = 0; i + 1 < items.size(); i += 2)
    if (flattened(i)) walk(*items[i + 1], name, depth + 1);
  ++m_attributes;
  for (std::size_t i = 0; i + 1 < items.size(); i += 2)
    if (!flattened(i)) walk(*items[i + 1], join(name, key_of(i)), depth + 1);
  --m_attributes;
}

void PytorchReader::add_tensor(const Value& v, const std::string& name) {
  if (!m_named.insert(&v).second && m_attributes > 0) return;
  for (const auto& t : m_tensors)
    if (t.name == name) refuse(path(), name + ": two tensors have this name");
  const TensorRef& t = v.tensor;
  const StorageRef& s = t.storage->storage;
  const auto it = m_storages.find(s.key);
  if (it == m_storages.end()) refuse(path(), name + ": its storage " + s.key + " is not in the file");
  const std::uint64_t elem = dtype_size(s.dtype), available = it->second.bytes / elem;
  // The unpickler checked the view against numel; numel (after a legacy view's offset) against the bytes here.
  if (s.numel > available || s.view_offset > available - s.numel)
    refuse(path(), name + ": storage " + s.key + " holds " + std::to_string(available) + " elements, the tensor's view needs " +
                     std::to_string(s.view_offset + s.numel));
  Placement p;
  p.entry = it->second.entry;
  p.begin = it->second.offset + (s.view_offset + t.offset) * elem;
  p.stride = t.stride;
  std::uint64_t expected = 1;
  for (std::size_t d = t.shape.size(); d-- > 0;) {
    if (t.shape[d] != 1 && t.stride[d] != expected) p.contiguous = false;
    expected *= t.shape[d];
  }
  m_tensors.push_back({name, s.dtype, t.shape});
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
  return p.contiguous && at % elem == 0 ? m_file.data() + at : nullptr;
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
