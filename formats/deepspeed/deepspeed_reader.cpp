// Reading DeepSpeed ZeRO checkpoints: the torch.save files parsed, every parameter mapped to the pieces of the
// ranks' fp32 partitions that hold it (layout and rules in deepspeed.hpp).

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "deepspeed/deepspeed.hpp"
#include "pytorch/pickle.hpp"
#include "pytorch/zip_layout.hpp"
#include "wavg/error.hpp"

namespace wavg::deepspeed {

namespace {

namespace fs = std::filesystem;
using pytorch::Kind;
using pytorch::Value;
using Piece = DeepspeedReader::Piece;

constexpr const char* k_short = "param_shapes need more elements than the partitions hold";

// One torch.save file: its pickle and where each storage's bytes lie.
struct TorchFile {
  std::string path;
  pytorch::Pickle pickle;
  std::map<std::string, pytorch::ZipEntry> storages;
};

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
  t.pickle = pytorch::unpickle(file.path(), file.data() + pkl->data_offset, pkl->size,
                               {"deepspeed.runtime.zero.config.ZeroStageEnum"});
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

// A ZeroStageEnum (an object holding its value) or a plain int.
std::int64_t integer(const TorchFile& f, const Value* v, const char* what) {
  if (v && v->kind == Kind::object && v->state && v->state->kind == Kind::tuple && v->state->items.size() == 1)
    v = v->state->items[0];
  if (!v || v->kind != Kind::integer) fail(f.path, std::string(what) + " is not an integer");
  return v->integer;
}

// A contiguous tensor's place in its file, as one piece.
Piece piece(const TorchFile& f, std::size_t file, const Value* v, DType dtype, const std::string& what) {
  if (!v || v->kind != Kind::tensor) fail(f.path, what + " is not a tensor");
  const pytorch::TensorRef& t = v->tensor;
  const pytorch::StorageRef& s = t.storage->storage;
  if (s.dtype != dtype)
    fail(f.path, what + " is " + std::string(dtype_name(s.dtype)) + ", not " + std::string(dtype_name(dtype)));
  std::uint64_t expect = 1;
  for (std::size_t d = t.shape.size(); d-- > 0;) {
    if (t.shape[d] > 1 && t.stride[d] != expect) fail(f.path, what + " is not stored contiguously");
    expect *= t.shape[d];
  }
  const auto it = f.storages.find(s.key);
  const std::size_t elem = dtype_size(dtype);
  if (it == f.storages.end() || it->second.size / elem < s.numel || s.view_offset != 0 || t.offset + expect > s.numel)
    fail(f.path, what + " lies outside its storage");
  return {file, it->second.data_offset + t.offset * elem, expect};
}

// Appends the pieces holding elements [begin, begin + count) of the concatenation of `flat`.
void cut(const std::vector<Piece>& flat, std::uint64_t begin, std::uint64_t count, std::vector<Piece>& out) {
  for (const Piece& p : flat) {
    if (count == 0) return;
    if (begin >= p.count) {
      begin -= p.count;
      continue;
    }
    const std::uint64_t n = std::min(count, p.count - begin);
    out.push_back({p.file, p.at + begin * 4, n});
    count -= n;
    begin = 0;
  }
}

std::uint64_t total(const std::vector<Piece>& flat) {
  std::uint64_t n = 0;
  for (const Piece& p : flat) n += p.count;
  return n;
}

// zero_to_fp32's natural_keys order: digits compare as numbers.
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

// The checkpoint folder itself: `path`, or the one its `latest` file names.
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
  return (fs::path(path) / tag).string();
}

}  // namespace

bool looks_like_deepspeed(const SniffInput& input) {
  const std::string& path = input.path();
  std::error_code ec;
  if (!input.folder()) return false;
  const fs::path folder = fs::path(path) / "latest";
  const std::string dir = fs::is_regular_file(folder, ec) ? checkpoint_folder(path) : path;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (ends_with(e.path().filename().string(), "_model_states.pt")) return true;
  return false;
}

DeepspeedReader::DeepspeedReader(const std::string& path) : ListedReader(path, FormatId::deepspeed) {
  const std::string dir = checkpoint_folder(path);
  std::vector<std::string> optim;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.find("mp_rank_") != std::string::npos && name.find("mp_rank_00_") == std::string::npos)
      fail(e.path().string(),
           "a model-parallel DeepSpeed checkpoint (several mp_rank files), which wavg does not read");
    if (ends_with(name, "_optim_states.pt")) optim.push_back(name);
  }
  if (optim.empty()) fail(dir, "holds no *_optim_states.pt: not a ZeRO checkpoint");
  std::sort(optim.begin(), optim.end(), natural_less);
  auto open = [&](const std::string& name) {
    m_paths.push_back(dir + "/" + name);
    m_files.push_back(std::make_unique<MappedFile>(m_paths.back()));
    return parse(*m_files.back());
  };
  std::vector<TorchFile> ranks;
  for (const std::string& name : optim) ranks.push_back(open(name));
  const Value* state0 = get(ranks[0].pickle.root, "optimizer_state_dict");
  const std::int64_t stage = integer(ranks[0], get(state0, "zero_stage"), "optimizer_state_dict.zero_stage");
  std::int64_t world = 0;
  const Value* count = get(state0, "partition_count");
  if (count && count->kind == Kind::list)
    for (const Value* c : count->items) world = std::max(world, integer(ranks[0], c, "partition_count"));
  else
    world = integer(ranks[0], count, "optimizer_state_dict.partition_count");
  if (stage < 1 || stage > 3) fail(ranks[0].path, "ZeRO stage " + std::to_string(stage) + " is not 1, 2 or 3");
  if (world != static_cast<std::int64_t>(ranks.size()))
    fail(dir, "partition_count says " + std::to_string(world) + " ranks, but " + std::to_string(ranks.size()) +
                  " *_optim_states.pt files are there (a rank's file missing?)");
  const TorchFile model = open(stage <= 2 ? "mp_rank_00_model_states.pt" : "zero_pp_rank_0_mp_rank_00_model_states.pt");
  m_layout = "ZeRO stage " + std::to_string(stage) + ", " + std::to_string(world) + " ranks";
  const Value* root = model.pickle.root;
  const std::size_t model_file = m_files.size() - 1;
  const Value* frozen = get(root, "frozen_param_shapes");
  if (frozen && frozen->kind == Kind::dict && !frozen->items.empty())
    fail(model.path, "has frozen parameters (frozen_param_shapes), which wavg does not read yet");

  // Buffers, from the module's state_dict.
  const Value* module = get(root, "module");
  const Value* buffers = get(root, "buffer_names");
  if (!buffers || buffers->kind != Kind::list) fail(model.path, "buffer_names is not a list");
  for (std::size_t i = 0; module && i + 1 < module->items.size(); i += 2) {
    const Value* key = module->items[i];
    if (key->kind != Kind::string || std::none_of(buffers->items.begin(), buffers->items.end(), [&](const Value* b) {
          return b->kind == Kind::string && b->text == key->text;
        }))
      continue;
    const Value* v = module->items[i + 1];
    if (!v || v->kind != Kind::tensor) fail(model.path, "buffer " + key->text + " is not a tensor");
    const DType dtype = v->tensor.storage->storage.dtype;
    m_tensors.push_back({key->text, dtype, v->tensor.shape});
    m_tensors.back().role = Role::buffer;
    m_pieces.push_back({piece(model, model_file, v, dtype, "buffer " + key->text)});
  }

  // Each rank's fp32 partitions, one list of pieces per group.
  const char* key = stage <= 2 ? "single_partition_of_fp32_groups" : "fp32_flat_groups";
  std::vector<std::vector<std::vector<Piece>>> groups(ranks.size());  // [rank][group]
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const Value* list = get(get(ranks[r].pickle.root, "optimizer_state_dict"), key);
    if (!list || list->kind != Kind::list)
      fail(ranks[r].path, std::string("optimizer_state_dict.") + key + " is not a list");
    for (std::size_t g = 0; g < list->items.size(); ++g)
      groups[r].push_back({piece(ranks[r], r, list->items[g], DType::f32, std::string(key) + "." + std::to_string(g))});
    if (groups[r].size() != groups[0].size())
      fail(ranks[r].path,
           "holds " + std::to_string(groups[r].size()) + " param groups, rank 0 " + std::to_string(groups[0].size()));
  }
  const Value* shapes = get(root, "param_shapes");
  if (!shapes || shapes->kind != Kind::list) fail(model.path, "param_shapes is not a list");
  auto add_param = [&](const Value* name, const Value* size, std::vector<Piece> pieces) {
    TensorInfo t{name->kind == Kind::string ? name->text : std::string(), DType::f32, {}};
    t.role = Role::weight;
    if (size->kind != Kind::tuple) fail(model.path, "param_shapes: " + t.name + " has no torch.Size");
    for (const Value* d : size->items) {
      if (d->kind != Kind::integer || d->integer < 0) fail(model.path, "param_shapes: " + t.name + " has a bad size");
      t.shape.push_back(static_cast<std::uint64_t>(d->integer));
    }
    std::uint64_t n = 0;
    if (!checked_count(t.shape, 4, n)) fail(model.path, "param_shapes: " + t.name + "'s size overflows");
    m_tensors.push_back(std::move(t));
    m_pieces.push_back(std::move(pieces));
  };
  if (stage <= 2) {
    if (shapes->items.size() != groups[0].size())
      fail(model.path, "param_shapes lists " + std::to_string(shapes->items.size()) + " groups, the partitions " +
                           std::to_string(groups[0].size()));
    for (std::size_t g = 0; g < groups[0].size(); ++g) {
      std::vector<Piece> flat;
      for (const auto& rank : groups) flat.insert(flat.end(), rank[g].begin(), rank[g].end());
      const std::uint64_t avail = total(flat);
      std::uint64_t offset = 0;
      const Value* group = shapes->items[g];
      for (std::size_t i = 0; group->kind == Kind::dict && i + 1 < group->items.size(); i += 2) {
        add_param(group->items[i], group->items[i + 1], {});
        const std::uint64_t n = m_tensors.back().count();
        if (n > avail - std::min(offset, avail)) fail(model.path, k_short);
        cut(flat, offset, n, m_pieces.back());
        offset += n;
      }
      // zero_to_fp32's check: both rounded up to 2 x world size, the parameters fill the partitions.
      const std::uint64_t align = 2 * static_cast<std::uint64_t>(world);
      if ((offset + align - 1) / align != (avail + align - 1) / align)
        fail(model.path, "the parameters of group " + std::to_string(g) + " use " + std::to_string(offset) +
                             " of the " + std::to_string(avail) + " partitioned elements");
    }
  } else {
    std::vector<std::vector<Piece>> flat(ranks.size());
    for (std::size_t r = 0; r < ranks.size(); ++r)
      for (const auto& g : groups[r]) flat[r].insert(flat[r].end(), g.begin(), g.end());
    const std::uint64_t avail = total(flat[0]);
    for (const auto& f : flat)
      if (total(f) != avail) fail(dir, "the ranks' ZeRO 3 partitions differ in size");
    std::uint64_t offset = 0;
    for (const Value* group : shapes->items)
      for (std::size_t i = 0; group->kind == Kind::dict && i + 1 < group->items.size(); i += 2) {
        add_param(group->items[i], group->items[i + 1], {});
        std::uint64_t left = m_tensors.back().count();
        const std::uint64_t part = (left + ranks.size() - 1) / ranks.size();
        if (part > avail - std::min(offset, avail)) fail(model.path, k_short);
        for (std::size_t r = 0; r < ranks.size() && left > 0; ++r) {
          const std::uint64_t n = std::min(part, left);
          cut(flat[r], offset, n, m_pieces.back());
          left -= n;
        }
        offset += part;
      }
    if (offset != avail)
      fail(model.path, "the parameters use " + std::to_string(offset) + " of each rank's " + std::to_string(avail) +
                           " partitioned elements");
  }
  // Shared parameters: a second name for a parameter's values, as zero_to_fp32 gives them.
  const Value* shared = get(root, "shared_params");
  for (std::size_t i = 0; shared && shared->kind == Kind::dict && i + 1 < shared->items.size(); i += 2) {
    const Value* alias = shared->items[i];
    const Value* of = shared->items[i + 1];
    for (std::size_t t = 0; alias->kind == Kind::string && of->kind == Kind::string && t < m_tensors.size(); ++t)
      if (m_tensors[t].name == of->text) {
        m_tensors.push_back({alias->text, m_tensors[t].dtype, m_tensors[t].shape});
        m_pieces.push_back(m_pieces[t]);
        break;
      }
  }
}

void DeepspeedReader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  const std::size_t elem = dtype_size(m_tensors[index].dtype);
  auto* out = static_cast<unsigned char*>(dst);
  for (const Piece& p : m_pieces[index]) {
    if (count == 0) return;
    if (offset >= p.count) {
      offset -= p.count;
      continue;
    }
    const std::uint64_t n = std::min(count, p.count - offset);
    std::memcpy(out, m_files[p.file]->data() + p.at + offset * elem, n * elem);
    out += n * elem;
    count -= n;
    offset = 0;
  }
}

}  // namespace wavg::deepspeed
