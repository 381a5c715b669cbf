// Reading DCP folders: the metadata, then every chunk's torch.save archive located and checked in its mapped data
// file (layout in dcp.hpp).

#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

#include "common/shared_bytes.hpp"
#include "dcp/dcp.hpp"
#include "read_back.hpp"
#include "pytorch/pickle.hpp"
#include "wavg/error.hpp"

namespace wavg::dcp {

namespace {

namespace fs = std::filesystem;

// Locates the chunk's elements inside its archive, [at, at + length) of `file`: the archive must be one tensor of
// the chunk's sizes and dtype, contiguous, inside its storage entry.
void locate(const MappedFile& file, std::uint64_t at, std::uint64_t length, const std::string& tensor, DType dtype,
            Chunk& chunk) {
  const std::string where = "tensor " + tensor + ": the chunk at offsets " + shape_string(chunk.offsets);
  if (!file.contains(at, length))
    fail(file.path(), where + " lies at bytes " + std::to_string(at) + " to " + std::to_string(at + length) +
                          ", past the end of the file (" + std::to_string(file.size()) + " bytes)");
  const unsigned char* base = file.data() + at;
  if (length < 4 || std::memcmp(base, "PK\x03\x04", 4) != 0) fail(file.path(), where + " is not a torch.save archive");
  const auto entries = pytorch::read_zip_directory(file.path(), base, length, pytorch::ZipSource::embedded);
  const pytorch::ZipEntry* pkl = nullptr;
  for (const auto& e : entries)
    if (e.name.size() > 9 && e.name.compare(e.name.size() - 9, 9, "/data.pkl") == 0) pkl = &e;
  if (!pkl) fail(file.path(), where + ": its archive holds no data.pkl");
  const std::string top = pkl->name.substr(0, pkl->name.size() - 9);
  for (const auto& e : entries)
    if (e.name == top + "/byteorder" &&
        std::string(reinterpret_cast<const char*>(base + e.data_offset), e.size) != "little")
      fail(file.path(), where + " is big-endian, which wavg does not read");
  const pytorch::Pickle pickle = pytorch::unpickle(file.path(), base + pkl->data_offset, pkl->size);
  const pytorch::Value& v = *pickle.root;
  if (v.kind != pytorch::Kind::tensor) fail(file.path(), where + " holds a " + pytorch::describe(v) + ", not a tensor");
  const pytorch::TensorRef& t = *v.tensor;
  const pytorch::StorageRef& s = *t.storage->storage;
  if (s.dtype != dtype)
    fail(file.path(),
         where + " is " + std::string(dtype_name(s.dtype)) + ", the metadata says " + std::string(dtype_name(dtype)));
  if (t.shape != chunk.sizes)
    fail(file.path(),
         where + " has sizes " + shape_string(t.shape) + ", the metadata says " + shape_string(chunk.sizes));
  std::uint64_t expect = 1;
  for (std::size_t d = t.shape.size(); d-- > 0;) {
    if (t.shape[d] > 1 && t.stride[d] != expect) fail(file.path(), where + " is not stored contiguously");
    expect *= t.shape[d];
  }
  const pytorch::ZipEntry* data = nullptr;
  for (const auto& e : entries)
    if (e.name == top + "/data/" + s.key) data = &e;
  if (!data) fail(file.path(), where + ": its archive has no storage " + s.key);
  const std::size_t elem = dtype_size(dtype);
  if (s.view_offset != 0 || data->size / elem < s.numel || t.offset + expect > s.numel)
    fail(file.path(), where + ": the tensor lies outside its storage");
  chunk.archive = at;
  chunk.length = length;
  chunk.storage = *data;
  chunk.begin = at + data->data_offset + t.offset * elem;
}

}  // namespace

bool looks_like_dcp(const SniffInput& input) {
  std::error_code ec;
  return input.folder() && fs::is_regular_file(fs::path(input.path()) / ".metadata", ec);
}

DcpReader::DcpReader(const std::string& path) : MappedPiecesReader(path, FormatId::dcp) {
  m_folder = path;
  while (m_folder.size() > 1 && m_folder.back() == '/') m_folder.pop_back();
  m_layout = "distributed checkpoint";
  const std::string meta_path = m_folder + "/.metadata";
  {
    const MappedFile meta(meta_path);
    m_meta = parse_metadata(meta_path, meta.data(), meta.size());
  }
  std::vector<Item>& items = m_meta.items;
  std::map<std::string, std::size_t> file_index;
  auto file_of = [&](const Storage& s, const std::string& what) -> std::size_t {
    const auto [it, fresh] = file_index.emplace(s.file, m_files.size());
    if (!fresh) return it->second;
    const std::string full = m_folder + "/" + s.file;
    std::error_code ec;
    if (!fs::exists(full, ec))
      fail(full, "missing: the metadata puts " + what + " in it (a rank's data file not copied?)");
    m_files.push_back(std::make_unique<MappedFile>(full));
    m_names.push_back(s.file);
    return it->second;
  };
  for (Item& item : items) {
    if (!item.tensor) {
      // Kept from input 1 by the writer, which copies its files.
      m_kept.push_back(item.name + " (torch.save'd value, input 1's)");
      const std::size_t f = file_of(item.where, item.name);
      if (!m_files[f]->contains(item.where.offset, item.where.length))
        fail(m_files[f]->path(), item.name + " lies past the end of the file");
      continue;
    }
    TensorInfo info{item.name, item.dtype, item.shape};
    info.role = item.role;
    std::uint64_t count = 0;
    if (!checked_count(info.shape, dtype_size(info.dtype), count))
      fail(meta_path, "tensor " + item.name + ": its size overflows");
    TensorChunks tc;
    for (std::size_t i = 0; i < item.chunks.size(); ++i) {
      const ChunkMeta& cm = item.chunks[i];
      Chunk c;
      c.offsets = cm.offsets;
      c.sizes = cm.sizes;
      c.file = file_of(cm.where, "tensor " + item.name + "'s chunk at offsets " + shape_string(cm.offsets));
      c.meta = i;
      tc.chunks.push_back(std::move(c));
    }
    check_cover(meta_path, info, tc);
    m_tensors.push_back(std::move(info));
    m_chunks.push_back(std::move(tc));
  }
  check_no_shared_bytes(meta_path);
  // check_cover sorted and filtered the chunks: each one's storage is its metadata entry's.
  for (std::size_t t = 0, k = 0; t < items.size(); ++t) {
    if (!items[t].tensor) continue;
    for (Chunk& c : m_chunks[k].chunks) {
      const Storage& where = items[t].chunks[c.meta].where;
      locate(*m_files[c.file], where.offset, where.length, items[t].name, items[t].dtype, c);
    }
    ++k;
  }
  for (Item& item : items) item.path = {};  // only the roles needed it
}

void DcpReader::check_no_shared_bytes(const std::string& meta_path) const {
  // DCP's FileSystemWriter writes each chunk's archive and each bytes value once, one after the other: regions
  // that share bytes would have one archive read once per chunk naming it (a 4 MiB archive under 1,000 row-chunks
  // merges into a 4 GB tensor), so they are refused, as TensorFlow's entries are.
  const std::vector<Item>& items = m_meta.items;
  std::map<std::string, std::size_t> file_index;
  for (std::size_t f = 0; f < m_names.size(); ++f) file_index.emplace(m_names[f], f);
  std::vector<std::pair<std::size_t, std::size_t>> owners;  // (item, chunk in Item::chunks, or npos: a bytes value)
  std::vector<StoredRegion> regions;
  for (std::size_t t = 0, k = 0; t < items.size(); ++t) {
    const auto add = [&](const Storage& s, std::size_t chunk) {
      regions.push_back({file_index.at(s.file), s.offset, s.length, owners.size()});
      owners.emplace_back(t, chunk);
    };
    if (!items[t].tensor) {
      add(items[t].where, std::string::npos);
      continue;
    }
    for (const Chunk& c : m_chunks[k++].chunks) add(items[t].chunks[c.meta].where, c.meta);
  }
  const auto both = shared_bytes(std::move(regions));
  if (!both) return;
  const auto name = [&](std::size_t owner) {
    const auto [t, chunk] = owners[owner];
    return chunk == std::string::npos
               ? items[t].name
               : "tensor " + items[t].name + "'s chunk at offsets " + shape_string(items[t].chunks[chunk].offsets);
  };
  const auto [t, chunk] = owners[both->first];
  fail(meta_path, name(both->first) + " and " + name(both->second) + " share bytes of " +
                      (chunk == std::string::npos ? items[t].where : items[t].chunks[chunk].where).file +
                      " (DCP never writes overlapping storages)");
}

void verify_output(const std::string& tmp_dir, const std::string& display, const OutputSpec& spec) {
  const auto broken = [&](const std::string& what) {
    fail(display, "the output does not read back as written (" + what + "); nothing was written");
  };
  std::unique_ptr<DcpReader> back;
  try {
    back = std::make_unique<DcpReader>(tmp_dir);
  } catch (const Error& e) {
    broken(e.problems().empty() ? std::string(e.what()) : e.problems().front().what);
  }
  if (const auto difference = read_back_difference(back->tensors(), spec.tensors)) broken(*difference);
}

std::vector<std::string> DcpReader::files() const {
  std::vector<std::string> out{m_folder + "/.metadata"};
  for (const auto& n : m_names) out.push_back(m_folder + "/" + n);
  return out;
}

void DcpReader::pieces(std::size_t index, std::uint64_t offset, std::uint64_t count, const PieceFn& f) const {
  const TensorInfo& t = m_tensors[index];
  const TensorChunks& c = m_chunks[index];
  WAVG_ASSERT(offset + count <= t.count());
  const std::size_t elem = dtype_size(t.dtype);
  std::size_t hint = 0;
  for (std::uint64_t pos = offset, end = offset + count; pos < end;) {
    const Run r = run_at(t, c, pos, end, hint);
    const Chunk& ch = c.chunks[r.chunk];
    if (!f({m_files[ch.file].get(), ch.begin + r.at * elem, pos - offset, r.count})) return;
    pos += r.count;
  }
}

std::vector<std::uint64_t> DcpReader::boundaries(std::size_t index) const {
  const TensorInfo& t = m_tensors[index];
  const TensorChunks& c = m_chunks[index];
  std::vector<std::uint64_t> out;
  if (c.chunks.size() < 2) return out;
  std::size_t hint = 0;
  const std::uint64_t n = t.count();
  std::uint64_t pos = 0;
  Run last{c.chunks.size(), 0, 0};
  while (pos < n) {
    const Run r = run_at(t, c, pos, n, hint);
    // A run that goes on where the last one stopped in the same chunk (a chunk's next row) is the same piece.
    if (pos > 0 && (r.chunk != last.chunk || r.at != last.at + last.count)) {
      // Pieces interleaved row by row (column-wise shards) are far more than two per chunk: not worth cutting at.
      if (out.size() >= 2 * c.chunks.size()) return {};
      out.push_back(pos);
    }
    last = r;
    pos += r.count;
  }
  return out;
}

}  // namespace wavg::dcp
