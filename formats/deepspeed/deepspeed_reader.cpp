// Reading DeepSpeed ZeRO checkpoints: the torch.save files parsed, every parameter mapped to the stretches of the
// ranks' fp32 partitions that hold it, and its optimizer moments to the same stretches of the moments' partitions
// (layout and rules in deepspeed.hpp).

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <unordered_set>

#include "common/shared_bytes.hpp"
#include "deepspeed/deepspeed.hpp"
#include "deepspeed/deepspeed_files.hpp"
#include "wavg/error.hpp"

namespace wavg::deepspeed {

namespace {

namespace fs = std::filesystem;
using pytorch::Kind;
using pytorch::Value;
using Piece = DeepspeedReader::Piece;
using Mirror = DeepspeedReader::Mirror;

constexpr const char* k_short = "param_shapes need more elements than the partitions hold";

// A stretch of a parameter's elements: `count` of them from element `at` of a rank's groups laid end to end.
struct Span {
  std::size_t rank = 0;
  std::uint64_t at = 0, count = 0;
};

// Appends the pieces holding elements [begin, begin + count) of the concatenation of `flat`.
void cut(const std::vector<Piece>& flat, std::uint64_t begin, std::uint64_t count, std::size_t elem,
         std::vector<Piece>& out) {
  for (const Piece& p : flat) {
    if (count == 0) return;
    if (begin >= p.count) {
      begin -= p.count;
      continue;
    }
    const std::uint64_t n = std::min(count, p.count - begin);
    out.push_back({p.file, p.at + begin * elem, n});
    count -= n;
    begin = 0;
  }
}

std::uint64_t total(const std::vector<Piece>& flat) {
  std::uint64_t n = 0;
  for (const Piece& p : flat) n += p.count;
  return n;
}

std::vector<Piece> pieces_of(const std::vector<Span>& spans, const std::vector<std::vector<Piece>>& ranks) {
  std::vector<Piece> out;
  for (const Span& s : spans) cut(ranks[s.rank], s.at, s.count, 4, out);
  return out;
}

// Lays each rank's groups end to end: [rank][group] -> [rank].
std::vector<std::vector<Piece>> joined(const std::vector<std::vector<std::vector<Piece>>>& groups) {
  std::vector<std::vector<Piece>> out(groups.size());
  for (std::size_t r = 0; r < groups.size(); ++r)
    for (const auto& g : groups[r]) out[r].insert(out[r].end(), g.begin(), g.end());
  return out;
}

// optimizer_state_dict.param_alignment_paddings, [group][param]: the zeros DeepSpeed put after each parameter in
// its group's flat vector (parameter_alignment; DeepSpeed writes zeros when it is off). Empty when absent (older
// DeepSpeed), as zero_to_fp32 reads it; its counts are checked against param_shapes by the caller.
std::vector<std::vector<std::uint64_t>> alignment_paddings(const TorchFile& f, std::size_t groups) {
  const Value* list = get(get(f.pickle.root, "optimizer_state_dict"), "param_alignment_paddings");
  std::vector<std::vector<std::uint64_t>> out;
  if (!list || list->kind == Kind::none) return out;
  const std::string what = "optimizer_state_dict.param_alignment_paddings";
  if (list->kind != Kind::list && list->kind != Kind::tuple) fail(f.path, what + " is not a list");
  if (list->items.size() != groups)
    fail(f.path, what + " lists " + std::to_string(list->items.size()) + " param groups, the partitions " +
                     std::to_string(groups));
  for (const Value* group : list->items) {
    if (group->kind != Kind::list && group->kind != Kind::tuple)
      fail(f.path, what + " holds a group that is not a list");
    out.emplace_back();
    for (const Value* n : group->items) {
      if (n->kind != Kind::integer || n->integer < 0) fail(f.path, what + " holds a padding that is not a count");
      out.back().push_back(static_cast<std::uint64_t>(n->integer));
    }
  }
  return out;
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

// The constructor's steps, in the order the tensors are listed.
struct DeepspeedReader::Build {
  explicit Build(DeepspeedReader& reader) : r(reader) {}

  DeepspeedReader& r;
  std::vector<TorchFile> ranks;   // the optim files, by rank; file index = rank
  std::vector<TorchFile> models;  // the model states files, rank 0's first
  std::vector<std::size_t> model_file;
  std::int64_t stage = 0;
  std::vector<std::vector<std::vector<Piece>>> fp32;      // [rank][group]: the fp32 master partition
  std::vector<std::vector<Span>> spans;                   // per parameter
  std::vector<std::size_t> params;                        // per parameter, its index in m_tensors
  std::vector<Index> modules;                             // per model states file, its module dict's keys
  std::vector<std::unordered_set<std::uint64_t>> placed;  // per file, the data offsets of the storages in m_storages
  // The flat partitions (fp32 masters, the optimizer's moments), which DeepSpeed saves each in a storage of its own.
  std::vector<StoredRegion> partitions;
  std::vector<std::string> partition_names;
  void flat_partition(const Piece& p, DType dtype, std::string what) {
    partitions.push_back({p.file, p.at, p.count * dtype_size(dtype), partition_names.size()});
    partition_names.push_back(std::move(what));
  }
  // Partitions sharing bytes would be read once per claimant (a small folder expanding into a large model), and a
  // merge would write one partition's mean over another's: refused by name, as TensorFlow's shared entries are.
  void check_no_shared_bytes() const {
    if (const auto both = shared_bytes(partitions))
      fail(r.m_paths[partitions[both->first].file], partition_names[both->first] + " and " +
                                                        partition_names[both->second] +
                                                        " share bytes (DeepSpeed saves each partition apart)");
  }
  // Every name once: zero_to_fp32 would let a later buffer, parameter or alias of the same name overwrite the
  // earlier one's values, which a checkpoint DeepSpeed wrote never asks for.
  std::map<std::string, std::size_t> names;  // to the index in m_tensors that the name takes
  void claim(const std::string& name, const std::string& as) {
    if (!names.emplace(name, r.m_tensors.size()).second)
      fail(models[0].path, as + " " + name + " repeats a name already given to a tensor");
  }

  TorchFile open(const std::string& name) {
    r.m_paths.push_back(r.m_folder + "/" + name);
    // A rank file that is a link is followed nowhere, as a tag (checkpoint_folder) or an HF shard is not.
    if (const std::string out = link_out_of_folder(r.m_folder, r.m_paths.back()); !out.empty())
      fail(r.m_paths.back(), out);
    r.m_files.push_back(std::make_unique<MappedFile>(r.m_paths.back()));
    r.m_storages.emplace_back();
    return parse(*r.m_files.back());
  }
  // A tensor's piece, its storage recorded for the writer.
  Piece place(const TorchFile& f, std::size_t file, const Value* v, DType dtype, const std::string& what) {
    pytorch::ZipEntry e;
    const Piece p = piece(f, file, v, dtype, what, &e);
    if (placed.size() <= file) placed.resize(file + 1);
    if (placed[file].insert(e.data_offset).second) r.m_storages[file].push_back(e);
    return p;
  }
  void add(TensorInfo t, Role role, std::vector<Piece> pieces, std::vector<Mirror> mirrors = {}) {
    t.role = role;
    r.m_tensors.push_back(std::move(t));
    r.m_pieces.push_back(std::move(pieces));
    r.m_mirrors.push_back(std::move(mirrors));
  }
  // The copies of module tensor `name` in the model states files (all but `skip`) of `count` elements.
  std::vector<Mirror> module_copies(const std::string& name, std::uint64_t count, std::size_t skip) {
    std::vector<Mirror> out;
    if (modules.empty())
      for (const TorchFile& f : models) modules.push_back(index_of(get(f.pickle.root, "module")));
    for (std::size_t m = 0; m < models.size(); ++m) {
      const auto found = modules[m].find(name);
      const Value* v = found == modules[m].end() ? nullptr : found->second;
      if (m == skip || !is_tensor(v)) continue;
      const DType dtype = v->tensor->storage->storage->dtype;
      std::uint64_t n = 1;
      for (const auto d : v->tensor->shape) n *= d;
      if (n != count || n == 0) continue;
      const Piece p = place(models[m], model_file[m], v, dtype, "module." + name);
      out.push_back({p.file, p.at, dtype});
    }
    return out;
  }

  // The module's copies of alias `name` of tensor t that are not t's own (torch.save keeps a tied pair one storage,
  // a module saved apart holds two), each written with t's values.
  std::vector<Mirror> alias_copies(const std::string& name, std::size_t t) {
    const DType dtype = r.m_tensors[t].dtype;
    const auto ours = [&](const Mirror& m) {
      const auto& own = r.m_mirrors[t];
      const auto& pieces = r.m_pieces[t];  // a buffer's: its place in rank 0's module
      return std::any_of(own.begin(), own.end(), [&](const Mirror& o) { return o.file == m.file && o.at == m.at; }) ||
             std::any_of(pieces.begin(), pieces.end(),
                         [&](const Piece& p) { return p.file == m.file && p.at == m.at; });
    };
    std::vector<Mirror> out;
    for (const Mirror& m : module_copies(name, r.m_tensors[t].count(), models.size()))
      if ((m.dtype == dtype || (dtype == DType::f32 && (m.dtype == DType::bf16 || m.dtype == DType::f16))) && !ours(m))
        out.push_back(m);
    return out;
  }

  void buffers();
  void parameters();
  void param(const Value* name, const Value* size);
  void optimizer();
};

void DeepspeedReader::Build::buffers() {
  const TorchFile& model = models[0];
  const Value* module = get(model.pickle.root, "module");
  const Value* listed = get(model.pickle.root, "buffer_names");
  if (!listed || listed->kind != Kind::list) fail(model.path, "buffer_names is not a list");
  std::unordered_set<std::string_view> buffer_names;
  for (const Value* b : listed->items)
    if (b->kind == Kind::string) buffer_names.insert(b->text);
  for (std::size_t i = 0; module && i + 1 < module->items.size(); i += 2) {
    const Value* key = module->items[i];
    if (key->kind != Kind::string || !buffer_names.contains(key->text)) continue;
    const Value* v = module->items[i + 1];
    if (!is_tensor(v)) fail(model.path, "buffer " + key->text + " is not a tensor");
    claim(key->text, "buffer");
    const DType dtype = v->tensor->storage->storage->dtype;
    TensorInfo t{key->text, dtype, v->tensor->shape};
    const Piece p = place(model, model_file[0], v, dtype, "buffer " + key->text);
    std::vector<Mirror> copies;
    for (const Mirror& m : module_copies(key->text, p.count, 0))
      if (m.dtype == dtype) copies.push_back(m);
    add(std::move(t), Role::buffer, {p}, std::move(copies));
  }
}

void DeepspeedReader::Build::param(const Value* name, const Value* size) {
  const std::string& path = models[0].path;
  if (name->kind != Kind::string) fail(path, "param_shapes holds a parameter name that is not a string");
  claim(name->text, "param_shapes: parameter");
  TensorInfo t{name->text, DType::f32, {}};
  if (size->kind != Kind::tuple) fail(path, "param_shapes: " + t.name + " has no torch.Size");
  for (const Value* d : size->items) {
    if (d->kind != Kind::integer || d->integer < 0) fail(path, "param_shapes: " + t.name + " has a bad size");
    t.shape.push_back(static_cast<std::uint64_t>(d->integer));
  }
  std::uint64_t n = 0;
  if (!checked_count(t.shape, 4, n)) fail(path, "param_shapes: " + t.name + "'s size overflows");
  std::vector<Mirror> copies;
  for (const Mirror& m : module_copies(t.name, n, models.size()))
    if (m.dtype == DType::f32 || m.dtype == DType::bf16 || m.dtype == DType::f16) copies.push_back(m);
  params.push_back(r.m_tensors.size());
  spans.emplace_back();
  add(std::move(t), Role::weight, {}, std::move(copies));
}

void DeepspeedReader::Build::parameters() {
  const std::string& path = models[0].path;
  const Value* shapes = get(models[0].pickle.root, "param_shapes");
  if (!shapes || shapes->kind != Kind::list) fail(path, "param_shapes is not a list");
  const std::size_t world = ranks.size(), groups = fp32[0].size();
  if (stage <= 2) {
    if (shapes->items.size() != groups)
      fail(path, "param_shapes lists " + std::to_string(shapes->items.size()) + " groups, the partitions " +
                     std::to_string(groups));
    // zero_to_fp32 reads rank 0's paddings; every rank saves the same, so a rank that differs is damaged.
    const auto paddings = alignment_paddings(ranks[0], groups);
    for (const TorchFile& rank : ranks)
      if (alignment_paddings(rank, groups) != paddings)
        fail(rank.path, "its param_alignment_paddings differ from rank 0's");
    std::vector<std::uint64_t> prefix(world, 0);  // where group g starts in each rank's groups laid end to end
    for (std::size_t g = 0; g < groups; ++g) {
      std::uint64_t avail = 0, offset = 0;
      for (std::size_t k = 0; k < world; ++k) avail += total(fp32[k][g]);
      const Value* group = shapes->items[g];
      const std::size_t count = group->kind == Kind::dict ? group->items.size() / 2 : 0;
      if (!paddings.empty() && paddings[g].size() != count)
        fail(ranks[0].path, "param_alignment_paddings lists " + std::to_string(paddings[g].size()) +
                                " paddings for group " + std::to_string(g) + ", param_shapes " + std::to_string(count) +
                                " parameters");
      for (std::size_t i = 0; 2 * i + 1 < 2 * count; ++i) {
        param(group->items[2 * i], group->items[2 * i + 1]);
        const std::uint64_t n = r.m_tensors.back().count();
        if (n > avail - std::min(offset, avail)) fail(path, k_short);
        std::uint64_t pos = offset, left = n;
        for (std::size_t k = 0; k < world && left > 0; ++k) {
          const std::uint64_t len = total(fp32[k][g]);
          if (pos >= len) {
            pos -= len;
            continue;
          }
          const std::uint64_t take = std::min(left, len - pos);
          spans.back().push_back({k, prefix[k] + pos, take});
          left -= take;
          pos = 0;
        }
        offset += n;
        const std::uint64_t pad = paddings.empty() ? 0 : paddings[g][i];
        if (pad > avail - offset) fail(ranks[0].path, "param_alignment_paddings reach past the partitions' end");
        offset += pad;
      }
      // zero_to_fp32's check: both rounded up to 2 x world size, the parameters fill the partitions.
      const std::uint64_t align = 2 * static_cast<std::uint64_t>(world);
      if ((offset + align - 1) / align != (avail + align - 1) / align)
        fail(path, "the parameters of group " + std::to_string(g) + " use " + std::to_string(offset) + " of the " +
                       std::to_string(avail) + " partitioned elements");
      for (std::size_t k = 0; k < world; ++k) prefix[k] += total(fp32[k][g]);
    }
  } else {
    const auto flat = joined(fp32);
    const std::uint64_t avail = total(flat[0]);
    for (const auto& f : flat)
      if (total(f) != avail) fail(r.m_folder, "the ranks' ZeRO 3 partitions differ in size");
    std::uint64_t offset = 0;
    for (const Value* group : shapes->items)
      for (std::size_t i = 0; group->kind == Kind::dict && i + 1 < group->items.size(); i += 2) {
        param(group->items[i], group->items[i + 1]);
        std::uint64_t left = r.m_tensors.back().count();
        const std::uint64_t part = (left + world - 1) / world;
        if (part > avail - std::min(offset, avail)) fail(path, k_short);
        for (std::size_t k = 0; k < world && left > 0; ++k) {
          spans.back().push_back({k, offset, std::min(part, left)});
          left -= spans.back().back().count;
        }
        offset += part;
      }
    if (offset != avail)
      fail(path, "the parameters use " + std::to_string(offset) + " of each rank's " + std::to_string(avail) +
                     " partitioned elements");
  }
  const auto flat = joined(fp32);
  for (std::size_t p = 0; p < params.size(); ++p) r.m_pieces[params[p]] = pieces_of(spans[p], flat);
  // Shared parameters: a second name for a parameter's values, as zero_to_fp32 gives them.
  const Value* shared = get(models[0].pickle.root, "shared_params");
  for (std::size_t i = 0; shared && shared->kind == Kind::dict && i + 1 < shared->items.size(); i += 2) {
    const Value* alias = shared->items[i];
    const Value* of = shared->items[i + 1];
    if (alias->kind != Kind::string || of->kind != Kind::string) continue;
    const auto target = names.find(of->text);
    if (target == names.end()) continue;  // zero_to_fp32 skips an alias of a name it does not hold
    const TensorInfo& of_t = r.m_tensors[target->second];
    // The tensor that holds the values, also for an alias of an alias; the alias takes its action and result.
    const std::size_t t = of_t.alias_of.empty() ? target->second : names.at(of_t.alias_of);
    claim(alias->text, "shared_params: the alias");
    TensorInfo info{alias->text, r.m_tensors[t].dtype, r.m_tensors[t].shape};
    info.alias_of = r.m_tensors[t].name;
    add(std::move(info), Role::alias, r.m_pieces[t], alias_copies(alias->text, t));
  }
}

void DeepspeedReader::Build::optimizer() {
  // Per rank and group, the optimizer's state of that group's flat partition.
  const std::size_t world = ranks.size(), groups = fp32[0].size();
  std::vector<std::vector<const Value*>> states(world, std::vector<const Value*>(groups, nullptr));
  std::vector<std::vector<Index>> keyed(world, std::vector<Index>(groups));  // states' keys, each looked up once
  std::size_t found = 0;
  for (std::size_t k = 0; k < world; ++k) {
    const Value* osd = get(ranks[k].pickle.root, "optimizer_state_dict");
    const Value* base = stage <= 2 ? get(osd, "base_optimizer_state") : get(osd, "optimizer_state_dict");
    for (std::size_t g = 0; g < groups; ++g) {
      // Rigid: the torch optimizer's state_dict, one flat parameter per group (state key g); elastic: a list.
      const Value* s = base && base->kind == Kind::list ? (g < base->items.size() ? base->items[g] : nullptr)
                                                        : get(get(base, "state"), static_cast<std::int64_t>(g));
      if (s && s->kind == Kind::dict) states[k][g] = s, keyed[k][g] = index_of(s), ++found;
    }
  }
  if (found == 0) return;  // saved before the first step
  if (found != world * groups) fail(r.m_folder, "some ranks' files hold an optimizer state for a group, others none");
  const auto flat = joined(fp32);
  const Value* keys = states[0][0];
  for (std::size_t i = 0; i + 1 < keys->items.size(); i += 2) {
    if (keys->items[i]->kind != Kind::string) continue;
    const std::string key = keys->items[i]->text;
    const Value* v0 = keys->items[i + 1];
    if (!is_tensor(v0)) {
      r.m_kept.push_back("optimizer state " + key + " (input 1's)");
      continue;
    }
    const bool scalar = v0->tensor->shape.empty();
    const DType dtype = scalar ? v0->tensor->storage->storage->dtype : DType::f32;
    std::vector<std::vector<std::vector<Piece>>> parts(world);  // [rank][group], as fp32's
    std::vector<Mirror> copies;
    const Piece first = place(ranks[0], 0, v0, dtype, key);
    for (std::size_t k = 0; k < world; ++k) {
      const Value* paddings = get(get(ranks[k].pickle.root, "optimizer_state_dict"), "group_paddings");
      for (std::size_t g = 0; g < groups; ++g) {
        const std::string what = "the optimizer's " + key + " of group " + std::to_string(g);
        const auto at = keyed[k][g].find(key);
        const Value* v = at == keyed[k][g].end() ? nullptr : at->second;
        const Piece p = place(ranks[k], k, v, dtype, what);
        if (scalar) {
          if (!v->tensor->shape.empty()) fail(ranks[k].path, what + " is not a scalar");
          if (k + g == 0) continue;
          if (std::memcmp(r.m_files[k]->data() + p.at, r.m_files[0]->data() + first.at, dtype_size(dtype)) != 0)
            fail(ranks[k].path, what + " differs from rank 0's group 0: the ranks disagree on the counter");
          copies.push_back({p.file, p.at, dtype});
          continue;
        }
        const std::uint64_t len = total(fp32[k][g]);
        std::int64_t pad = 0;
        if (paddings && paddings->kind == Kind::list && g < paddings->items.size())
          pad = integer(ranks[k], paddings->items[g], "group_paddings");
        if (p.count != len && (pad <= 0 || p.count - len != static_cast<std::uint64_t>(pad)))
          fail(ranks[k].path,
               what + " holds " + std::to_string(p.count) + " elements, its fp32 partition " + std::to_string(len));
        parts[k].push_back({{p.file, p.at, len}});
        flat_partition(p, dtype, what);
      }
    }
    if (scalar) {
      add({"optimizer/" + key, dtype, {}}, Role::counter, {first}, std::move(copies));
      continue;
    }
    const auto moments = joined(parts);
    for (std::size_t q = 0; q < params.size(); ++q) {
      const TensorInfo& t = r.m_tensors[params[q]];
      add({"optimizer/" + t.name + "/" + key, DType::f32, t.shape}, Role::optimizer_state,
          pieces_of(spans[q], moments));
    }
  }
}

DeepspeedReader::DeepspeedReader(const std::string& path) : ListedReader(path, FormatId::deepspeed) {
  m_folder = checkpoint_folder(path);
  Build b(*this);
  std::vector<std::string> optim, models;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(m_folder, ec)) {
    const std::string name = e.path().filename().string();
    if (name.find("mp_rank_") != std::string::npos && name.find("mp_rank_00_") == std::string::npos)
      fail(e.path().string(),
           "a model-parallel DeepSpeed checkpoint (several mp_rank files), which wavg does not read");
    if (ends_with(name, "_optim_states.pt")) optim.push_back(name);
    if (ends_with(name, "_model_states.pt")) models.push_back(name);
  }
  if (optim.empty()) fail(m_folder, "holds no *_optim_states.pt: not a ZeRO checkpoint");
  std::sort(optim.begin(), optim.end(), natural_less);
  std::sort(models.begin(), models.end(), natural_less);
  for (const std::string& name : optim) b.ranks.push_back(b.open(name));
  const Value* state0 = get(b.ranks[0].pickle.root, "optimizer_state_dict");
  b.stage = integer(b.ranks[0], get(state0, "zero_stage"), "optimizer_state_dict.zero_stage");
  std::int64_t world = 0;
  const Value* count = get(state0, "partition_count");
  if (count && count->kind == Kind::list)
    for (const Value* c : count->items) world = std::max(world, integer(b.ranks[0], c, "partition_count"));
  else
    world = integer(b.ranks[0], count, "optimizer_state_dict.partition_count");
  if (b.stage < 1 || b.stage > 3) fail(b.ranks[0].path, "ZeRO stage " + std::to_string(b.stage) + " is not 1, 2 or 3");
  if (world != static_cast<std::int64_t>(b.ranks.size()))
    fail(m_folder, "partition_count says " + std::to_string(world) + " ranks, but " + std::to_string(b.ranks.size()) +
                       " *_optim_states.pt files are there (a rank's file missing?)");
  const std::string first = b.stage <= 2 ? "mp_rank_00_model_states.pt" : "zero_pp_rank_0_mp_rank_00_model_states.pt";
  if (std::find(models.begin(), models.end(), first) == models.end()) fail(m_folder, "holds no " + first);
  std::stable_partition(models.begin(), models.end(), [&](const std::string& n) { return n == first; });
  for (const std::string& name : models) {
    b.model_file.push_back(m_files.size());
    b.models.push_back(b.open(name));
  }
  m_layout = "ZeRO stage " + std::to_string(b.stage) + ", " + std::to_string(world) + " ranks";
  const Value* frozen = get(b.models[0].pickle.root, "frozen_param_shapes");
  if (frozen && frozen->kind == Kind::dict && !frozen->items.empty())
    fail(b.models[0].path, "has frozen parameters (frozen_param_shapes), which wavg does not read yet");

  const char* key = b.stage <= 2 ? "single_partition_of_fp32_groups" : "fp32_flat_groups";
  b.fp32.resize(b.ranks.size());
  for (std::size_t k = 0; k < b.ranks.size(); ++k) {
    const Value* list = get(get(b.ranks[k].pickle.root, "optimizer_state_dict"), key);
    if (!list || list->kind != Kind::list)
      fail(b.ranks[k].path, std::string("optimizer_state_dict.") + key + " is not a list");
    for (std::size_t g = 0; g < list->items.size(); ++g) {
      const std::string what = std::string(key) + "." + std::to_string(g);
      b.fp32[k].push_back({b.place(b.ranks[k], k, list->items[g], DType::f32, what)});
      b.flat_partition(b.fp32[k].back().front(), DType::f32, what);
    }
    if (b.fp32[k].size() != b.fp32[0].size())
      fail(b.ranks[k].path,
           "holds " + std::to_string(b.fp32[k].size()) + " param groups, rank 0 " + std::to_string(b.fp32[0].size()));
  }
  b.buffers();
  b.parameters();
  b.optimizer();
  b.check_no_shared_bytes();
  for (std::size_t i = 0; i + 1 < b.models[0].pickle.root->items.size(); i += 2) {
    const Value* k = b.models[0].pickle.root->items[i];
    const Value* v = b.models[0].pickle.root->items[i + 1];
    if (k->kind == Kind::string && v->kind == Kind::integer)
      m_kept.push_back(k->text + " (int " + std::to_string(v->integer) + ")");
  }
}

}  // namespace wavg::deepspeed
