// The torch.save files of a DeepSpeed checkpoint: parsed, looked up, and their tensors placed in their files.

#include "deepspeed/deepspeed_files.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>

#include "wavg/error.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg::deepspeed {

namespace fs = std::filesystem;
using pytorch::Kind;
using pytorch::Value;

// DeepSpeed's own classes in its pickles, read as values (nothing is imported): the ZeRO stage, the loss scaler
// object of the optimizer's state, the fragment addresses of param_slice_mappings.
const std::vector<std::string> k_value_names{
    "deepspeed.runtime.zero.config.ZeroStageEnum", "deepspeed.runtime.fp16.loss_scaler.LossScaler",
    "deepspeed.runtime.fp16.loss_scaler.DynamicLossScaler", "deepspeed.utils.tensor_fragment.fragment_address"};

TorchFile parse(const MappedFile& file) {
  TorchFile t;
  t.path = file.path();
  const auto entries = pytorch::read_zip_directory(file.path(), file.data(), file.size());
  const pytorch::ZipEntry* pkl = nullptr;
  std::string top;
  for (const auto& e : entries)
    if (!pkl && e.name.size() > 9 && e.name.compare(e.name.size() - 9, 9, "/data.pkl") == 0)
      pkl = &e, top = e.name.substr(0, e.name.size() - 9);
  if (!pkl) fail(file.path(), "not a torch.save file (no data.pkl)");
  t.pickle = pytorch::unpickle(file.path(), file.data() + pkl->data_offset, pkl->size, k_value_names);
  for (const auto& e : entries)
    if (e.name.rfind(top + "/data/", 0) == 0) t.storages[e.name.substr(top.size() + 6)] = e;
  return t;
}

const Value* get(const Value* dict, const char* key) {
  if (!dict || dict->kind != Kind::dict) return nullptr;
  for (std::size_t i = 0; i + 1 < dict->items.size(); i += 2)
    if (dict->items[i]->kind == Kind::string && dict->items[i]->text == key) return dict->items[i + 1];
  return nullptr;
}

Index index_of(const Value* dict) {
  Index out;
  if (!dict || dict->kind != Kind::dict) return out;
  for (std::size_t i = 0; i + 1 < dict->items.size(); i += 2)
    if (dict->items[i]->kind == Kind::string) out.emplace(dict->items[i]->text, dict->items[i + 1]);
  return out;
}

const Value* get(const Value* dict, std::int64_t key) {
  if (!dict || dict->kind != Kind::dict) return nullptr;
  for (std::size_t i = 0; i + 1 < dict->items.size(); i += 2)
    if (dict->items[i]->kind == Kind::integer && dict->items[i]->integer == key) return dict->items[i + 1];
  return nullptr;
}

std::int64_t integer(const TorchFile& f, const Value* v, const char* what) {
  if (v && v->kind == Kind::object && v->state && v->state->kind == Kind::tuple && v->state->items.size() == 1)
    v = v->state->items[0];
  if (!v || v->kind != Kind::integer) fail(f.path, std::string(what) + " is not an integer");
  return v->integer;
}

bool is_tensor(const Value* v) { return v && v->kind == Kind::tensor && v->tensor->storage; }

DeepspeedReader::Piece piece(const TorchFile& f, std::size_t file, const Value* v, DType dtype, const std::string& what,
                             pytorch::ZipEntry* entry) {
  if (!is_tensor(v)) fail(f.path, what + " is not a tensor");
  const pytorch::TensorRef& t = *v->tensor;
  const pytorch::StorageRef& s = *t.storage->storage;
  if (s.complex) fail(f.path, what + " holds complex numbers, which wavg reads from a .pt file only, not DeepSpeed's");
  if (s.dtype != dtype)
    fail(f.path, what + " is " + std::string(dtype_name(s.dtype)) + ", not " + std::string(dtype_name(dtype)));
  std::uint64_t expect = 1;
  for (std::size_t d = t.shape.size(); d-- > 0;) {
    if (t.shape[d] > 1 && t.stride[d] != expect) fail(f.path, what + " is not stored contiguously");
    expect *= t.shape[d];
  }
  const auto it = f.storages.find(s.key);
  const std::size_t elem = dtype_size(dtype);
  if (it == f.storages.end() || it->second.size / elem < s.numel || s.view_offset != 0 || t.offset > s.numel ||
      expect > s.numel - t.offset)
    fail(f.path, what + " lies outside its storage");
  if (entry) *entry = it->second;
  return {file, it->second.data_offset + t.offset * elem, expect};
}

bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      const std::string x = a.substr(i, ie - i), y = b.substr(j, je - j);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ie, j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string checkpoint_folder(const std::string& path) {
  std::error_code ec;
  const fs::path latest = fs::path(path) / "latest";
  if (!fs::is_regular_file(latest, ec)) return path;
  std::ifstream in(latest);
  std::string tag(256, '\0');
  in.read(tag.data(), static_cast<std::streamsize>(tag.size()));
  tag.resize(static_cast<std::size_t>(in.gcount()));
  while (!tag.empty() && std::isspace(static_cast<unsigned char>(tag.back()))) tag.pop_back();
  if (tag.empty() || tag.find('/') != std::string::npos || tag == "." || tag == ".." ||
      tag.find('\0') != std::string::npos)
    fail(latest.string(), "does not name a checkpoint folder beside it");
  // The rule of every model folder: no link leads out of it (a tag linked to a folder elsewhere is not this one's).
  const std::string folder = (fs::path(path) / tag).string();
  for (const std::string& part : {latest.string(), folder})
    if (const std::string out = link_out_of_folder(path, part); !out.empty()) fail(part, out);
  return folder;
}

}  // namespace wavg::deepspeed
