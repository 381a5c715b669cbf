#include "hdf5/hdf5_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <string_view>
#include <utility>

#include "hdf5/keras_layout.hpp"
#include "hdf5/keras_optimizer.hpp"
#include "hdf5/structure_probe.hpp"
#include "wavg/error.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg {

bool looks_like_hdf5(const SniffInput& input) {
  const std::string_view bytes = input.text();
  for (std::size_t at = 0; at <= (1u << 20); at = at ? at * 2 : 512) {
    if (bytes.size() < 8 || at > bytes.size() - 8) return false;
    if (std::memcmp(bytes.data() + at, h5native::k_signature, 8) == 0) return true;
  }
  return false;
}

namespace {

// Tells whether the file has a Keras model_weights group with its layer_names; a model_weights group without them
// (a Keras model converted from safetensors, say) is read as plain HDF5.
bool has_keras_model_weights(hid_t root, const std::string& file) {
  if (!h5::exists(H5Lexists(root, "model_weights", H5P_DEFAULT), file, "cannot look for model_weights")) return false;
  const std::string what = "cannot read the attributes of model_weights";
  return h5::exists(H5Aexists_by_name(root, "model_weights", "layer_names", H5P_DEFAULT), file, what) ||
         h5::exists(H5Aexists_by_name(root, "model_weights", "layer_names0", H5P_DEFAULT), file, what);
}

}  // namespace

Hdf5Reader::Hdf5Reader(std::string path, Probe probe, Walk walk)
    : ListedReader(std::move(path), FormatId::hdf5), m_walk(walk) {
  h5::init();
  const std::optional<std::string> found = probe == Probe::yes ? probe_structure(m_path) : std::nullopt;
  open(found ? std::optional<std::string_view>(*found) : std::nullopt);
}

Hdf5Reader::Hdf5Reader(std::string path, MappedFile mapping) : ListedReader(std::move(path), FormatId::hdf5) {
  h5::init();
  m_map.emplace(std::move(mapping));
  open(std::nullopt);
}

Hdf5Reader::Hdf5Reader(std::string path, std::string_view structure) : ListedReader(std::move(path), FormatId::hdf5) {
  h5::init();
  open(structure);
}

void Hdf5Reader::open(std::optional<std::string_view> structure) {
  const h5::CrashGuard guard(m_path);
  try {
    if (structure)
      adopt_structure(*structure);
    else
      open_tree();
  } catch (...) {
    close_handles();  // while the guard still stands: closing a corrupt file's objects can fault too
    if (m_fd >= 0) ::close(m_fd);
    throw;
  }
}

void Hdf5Reader::close_handles() {
  m_entries.clear();
  m_file.reset();
}

void Hdf5Reader::open_file() {
  m_fd = open_regular_file(m_path);
  struct stat st {};
  if (::fstat(m_fd, &st) != 0) fail(m_path, std::strerror(errno));
  m_file_size = static_cast<std::uint64_t>(st.st_size);

  h5::Handle fapl = h5::check(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, m_path, "cannot set up HDF5");
#if H5_VERSION_GE(1, 10, 7)
  // Reading never needs a lock, and locks fail on some network file systems.
  H5Pset_file_locking(fapl.get(), false, true);
#endif
  m_file = h5::check(H5Fopen(m_path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose, m_path,
                     "not a valid HDF5 file, or truncated");
  check_driver_block();
}

// A version 0/1 superblock may name a driver information block, which only HDF5's multi-file drivers (family,
// multi, split) write. Reading ignores it; writing (the output is a copy of input 1, opened for writing to add the
// provenance) loads and flushes it, and a damaged address failed there, naming the output. wavg reads single files.
void Hdf5Reader::check_driver_block() const {
  h5::Handle fcpl = h5::check(H5Fget_create_plist(m_file.get()), H5Pclose, m_path, "cannot read the file's layout");
  hsize_t at = 0;
  H5Pget_userblock(fcpl.get(), &at);
  unsigned char sb[64];
  if (at > m_file_size || sizeof sb > m_file_size - at ||
      ::pread(m_fd, sb, sizeof sb, static_cast<off_t>(at)) != static_cast<ssize_t>(sizeof sb))
    return;  // a superblock this short has no such field: HDF5 opened it
  const unsigned version = sb[8];
  const std::size_t field = version == 0 ? 48 : 52;  // after the base, free-space and end-of-file addresses
  if (version > 1 || sb[13] != 8) return;            // later versions keep drivers in an extension
  for (std::size_t i = field; i < field + 8; ++i)
    if (sb[i] != 0xff)
      fail(m_path,
           "corrupt HDF5 file (its superblock names a driver information block, which only HDF5's "
           "multi-file drivers write; wavg reads single files)");
}

void Hdf5Reader::open_tree() {
  open_file();
  if (m_walk == Walk::native) read_native();
  const hid_t root = m_file.get();

  if (keras::read_names(root, "layer_names", m_path)) {
    m_layout = "Keras 2 weights";
    add_found(keras::walk_keras2(root, "", m_path));
  } else if (has_keras_model_weights(root, m_path)) {
    h5::Handle mw =
        h5::check(H5Gopen2(root, "model_weights", H5P_DEFAULT), H5Gclose, m_path, "cannot open group model_weights");
    m_layout = "Keras 2 model";
    keras::FoundModel model = keras::walk_keras2(mw.get(), "model_weights/", m_path);
    if (h5::exists(H5Lexists(root, "optimizer_weights", H5P_DEFAULT), m_path, "cannot look for optimizer_weights")) {
      h5::Handle ow = h5::check(H5Gopen2(root, "optimizer_weights", H5P_DEFAULT), H5Gclose, m_path,
                                "cannot open group optimizer_weights");
      if (auto names = keras::read_names(ow.get(), "weight_names", m_path))
        model.other = keras::listed_weights(ow.get(), "optimizer_weights/", *names, "optimizer_weights", m_path);
    }
    add_found(std::move(model));
    if (h5::exists(H5Aexists(root, "model_config"), m_path, "cannot look for attribute model_config"))
      if (auto config = h5::attribute_text(root, "model_config", m_path))
        if (auto layers = keras::config_layers(*config)) keras::set_keras2_kinds(m_layers, "model_weights/", *layers);
  } else if (h5::exists(H5Lexists(root, "layers", H5P_DEFAULT), m_path, "cannot look for layers") &&
             h5::exists(H5Lexists(root, "vars", H5P_DEFAULT), m_path, "cannot look for vars")) {
    // Keras 3 writes no root attributes, but wavg's provenance adds some: recognise the tree, not their absence.
    m_layout = "Keras 3 weights";
    add_found(keras::walk_keras3(root, m_path));
  } else {
    m_layout = "plain HDF5";
  }
  add_uncovered();
  read_metadata();
  H5Eclear2(H5E_DEFAULT);
  check_data_ranges();
  m_headers.clear();  // it views the native index's paths
  m_header_names.clear();
  m_native.reset();
  map_file();
}

void Hdf5Reader::read_native() {
  try {
    if (!m_map) m_map.emplace(m_path, m_fd);
  } catch (const Error&) {
    return;  // no address space for a mapping: the library walks the file
  }
  if (m_map->size() != m_file_size) return;  // not the file HDF5 opened (replaced meanwhile): the library walks it
  try {
    m_native = h5native::Index::read(m_map->data(), m_map->size());
  } catch (const h5native::Index::Damage& d) {
    fail(m_path, "corrupt HDF5 file: " + d.what);
  }
  m_walked_natively = m_native.has_value();
}

Hdf5Reader::~Hdf5Reader() {
  {
    const h5::CrashGuard guard(m_path);
    close_handles();
  }
  if (m_fd >= 0) ::close(m_fd);  // the mapping, unmapped after this, does not need it
}

void Hdf5Reader::add_found(keras::FoundModel model) {
  m_layers.order = model.order;
  for (const keras::FoundLayer& found : model.layers) {
    LayerInfo layer{found.group, found.kind, {}, false};
    std::set<std::size_t> float_parts;  // an integer seed state beside an RNN cell orders nothing that is paired
    for (std::size_t i = 0; i < found.datasets.size(); ++i) {
      if (!add_dataset(found.datasets[i], Listed::yes)) continue;
      layer.tensors.push_back(m_tensors.size() - 1);
      if (is_float(m_tensors.back().dtype)) float_parts.insert(found.part[i]);
    }
    layer.sub_objects = float_parts.size() > 1;
    m_layers.layers.push_back(std::move(layer));
  }
  for (const std::string& name : model.other) add_dataset(name, Listed::yes);
  set_keras_roles();
}

// Keras's optimizers keep their own variables first, then the per-variable slots. Keras 2 names them
// optimizer_weights/OPT/iter:0 (own: the iteration counter, then the hyper-parameters of its _hyper dict) and
// optimizer_weights/OPT/VARIABLE_PATH/m:0 (slots, under the variable's path). Keras 3 numbers them
// optimizer/vars/N (keras_optimizer.hpp).
void Hdf5Reader::set_keras_roles() {
  for (TensorInfo& t : m_tensors) {
    if (t.name.rfind("optimizer_weights/", 0) == 0) {
      const std::string rest = t.name.substr(std::string("optimizer_weights/").size());
      const auto slash = rest.find('/');
      const bool own = slash != std::string::npos && rest.find('/', slash + 1) == std::string::npos;
      const std::string leaf = own ? rest.substr(slash + 1) : "";
      t.role = !own                                               ? Role::optimizer_state
               : leaf.rfind("iter", 0) == 0 || !is_float(t.dtype) ? Role::counter
                                                                  : Role::hyper_parameter;
    } else if (m_layout != "plain HDF5" && t.role == Role::unknown) {
      // A Keras 3 SeedGenerator (dropout's, a random layer's) keeps its state in its own object's vars/.
      t.role = t.name.find("seed_generator") != std::string::npos ? Role::rng : Role::weight;
    }
  }
  keras::set_keras3_optimizer_roles(m_tensors, nullptr);
}

void Hdf5Reader::set_keras3_optimizer(const keras::OptimizerConfig& config) {
  keras::set_keras3_optimizer_roles(m_tensors, &config);
}

bool Hdf5Reader::add_dataset(const std::string& name, Listed listed) {
  if (m_native)
    if (const h5native::Object* o = m_native->find(name); o && o->dataset.known)
      return add_native(o->dataset, name, listed);
  h5::check_links(m_file.get(), name, m_path);
  return add_opened(h5::open_dataset(m_file.get(), name, m_path, "cannot open dataset " + name), name, listed);
}

bool Hdf5Reader::add_opened(h5::Handle ds, const std::string& name, Listed listed) {
  const std::string what = "cannot open dataset " + name;
  h5::Handle type = h5::check(H5Dget_type(ds.get()), H5Tclose, m_path, what);
  const auto dtype = h5::dtype_of(type.get());
  const auto part = dtype ? std::nullopt : h5::complex_part(type.get());
  if (!dtype && !part) {
    // Numbers without a dtype here are refused by name: dropped, or copied from input 1 into a merge, they would
    // leave a tensor unaccounted for.
    if (const std::string numbers = h5::unread_numbers(type.get()); !numbers.empty()) fail(m_path, name + ": " + numbers);
    if (listed == Listed::yes) fail(m_path, name + ": unsupported element type (not a number)");
    return false;  // strings, opaque bytes, records: kept in the output by the writer's copy, never averaged
  }
  h5::Handle dcpl = h5::check(H5Dget_create_plist(ds.get()), H5Pclose, m_path, what);
  h5::check_storage(dcpl.get(), name, m_path);
  h5::Handle space = h5::check(H5Dget_space(ds.get()), H5Sclose, m_path, what);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > H5S_MAX_RANK) fail(m_path, name + ": unreadable dataspace");
  if (H5Sget_simple_extent_type(space.get()) == H5S_NULL) return false;  // no values at all
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
    fail(m_path, name + ": unreadable dataspace");
  TensorInfo info = part ? complex_tensor(name, *part, Shape(dims.begin(), dims.end()))
                         : TensorInfo{name, *dtype, Shape(dims.begin(), dims.end())};
  std::uint64_t count = 0;
  if (!checked_count(info.shape, dtype_size(info.dtype), count))
    fail(m_path, name + ": shape " + shape_string(stored_shape(info)) + " overflows");
  const std::uint64_t bytes = count * dtype_size(info.dtype);
  // A contiguous dataset's storage is allocated exactly when it has an address (H5Dget_space_status asks the same).
  const haddr_t addr = H5Dget_offset(ds.get());
  if (addr == HADDR_UNDEF) check_allocated(ds.get(), name, bytes);

  Entry entry;
  entry.listed = listed == Listed::yes;
  entry.mem_type = h5::memory_type(info, type.get());
  if (H5Pget_layout(dcpl.get()) == H5D_CONTIGUOUS) {
    const hsize_t stored = H5Dget_storage_size(ds.get());
    // Written contiguous storage is exactly the extent's elements, inside the file: a damaged dataspace or layout
    // (a shape of 1.1e9 elements over 8 bytes) would otherwise be listed, and an output sized, from the shape
    // before the first read fails. The native walk holds its datasets to the same (native_index.cpp).
    const std::uint64_t need = count / parts_per_element(info) * H5Tget_size(type.get());
    if (addr != HADDR_UNDEF && (stored != need || addr > m_file_size || stored > m_file_size - addr))
      fail(m_path, name + ": its contiguous storage is " + std::to_string(stored) + " bytes at offset " +
                       std::to_string(addr) + " of a " + std::to_string(m_file_size) + "-byte file; its shape " +
                       shape_string(stored_shape(info)) + " needs " + std::to_string(need) + " bytes");
    if (addr != HADDR_UNDEF && stored > 0 && addr <= m_file_size && stored <= m_file_size - addr)
      m_data_ranges.push_back({{addr, addr + stored}, m_tensors.size()});
    // The direct path: contiguous storage, no filters, file type equal to the memory type, and the whole extent
    // inside the file (external storage was refused above, so the offset is one in this file).
    if (H5Pget_nfilters(dcpl.get()) == 0 && H5Tequal(type.get(), entry.mem_type.get()) > 0 && addr != HADDR_UNDEF &&
        addr <= m_file_size && bytes <= m_file_size - addr && stored == bytes)
      entry.direct_offset = static_cast<std::int64_t>(addr);
  }
  H5Eclear2(H5E_DEFAULT);
  // A dataset read straight from the file needs no open handle, and an open one costs HDF5 about 10 KiB: a file of
  // 100k small datasets held open needed more than the structure probe's 1 GiB.
  if (entry.direct_offset < 0) entry.dataset = std::move(ds);
  m_tensors.push_back(std::move(info));
  m_entries.push_back(std::move(entry));
  return true;
}

bool Hdf5Reader::add_native(const h5native::Dataset& d, const std::string& name, Listed listed) {
  if (d.null) return false;  // no values at all
  Entry entry;
  entry.listed = listed == Listed::yes;
  entry.direct_offset = static_cast<std::int64_t>(d.offset);
  if (d.stored > 0) m_data_ranges.push_back({{d.offset, d.offset + d.stored}, m_tensors.size()});
  m_tensors.push_back(TensorInfo{name, d.dtype, d.dims});
  m_entries.push_back(std::move(entry));
  return true;
}

void Hdf5Reader::map_file() {
  bool any_direct = false;
  for (const Entry& e : m_entries) any_direct = any_direct || e.direct_offset >= 0;
  if (!any_direct || m_file_size == 0) {
    m_map.reset();  // the native walk's mapping, no longer needed
    return;
  }
  try {
    if (!m_map) m_map.emplace(m_path, m_fd);
  } catch (const Error&) {
    return;  // e.g. no address space left: pread() serves every read
  }
  // The direct ranges were checked against m_file_size; a file that shrank since is served by pread(), which
  // reports the truncation.
  if (m_map->size() < m_file_size) m_map.reset();
}

bool Hdf5Reader::direct_range(std::size_t index, std::uint64_t offset, std::uint64_t count, std::uint64_t& begin,
                              std::uint64_t& end) const {
  WAVG_ASSERT(index < m_entries.size());
  const TensorInfo& t = m_tensors[index];
  WAVG_ASSERT(offset <= t.count() && count <= t.count() - offset);
  const std::int64_t at = m_entries[index].direct_offset;
  if (at < 0) return false;
  const std::size_t elem = dtype_size(t.dtype);
  begin = static_cast<std::uint64_t>(at) + offset * elem;
  end = begin + count * elem;  // inside the file: add_dataset checked the whole extent
  return true;
}

const void* Hdf5Reader::view(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  std::uint64_t begin = 0, end = 0;
  if (!m_map || !direct_range(index, offset, count, begin, end)) return nullptr;
  return m_map->data() + begin;  // at any byte offset: the kernels load elements from any address
}

void Hdf5Reader::release(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  std::uint64_t begin = 0, end = 0;
  if (!m_map || !direct_range(index, offset, count, begin, end) || begin == end) return;
  m_map->release(begin, end);
}

void Hdf5Reader::prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) {
  std::uint64_t begin = 0, end = 0;
  if (!direct_range(index, offset, count, begin, end) || begin == end) return;
  // Starts asynchronous read-ahead into the page cache; returns at once. Useless for files already cached, cheap.
  ::posix_fadvise(m_fd, static_cast<off_t>(begin), static_cast<off_t>(end - begin), POSIX_FADV_WILLNEED);
}

void Hdf5Reader::read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) {
  WAVG_ASSERT(index < m_entries.size());
  const TensorInfo& t = m_tensors[index];
  WAVG_ASSERT(offset + count <= t.count());
  const Entry& e = m_entries[index];
  if (e.direct_offset >= 0) {
    const std::size_t elem = dtype_size(t.dtype);
    auto* out = static_cast<char*>(dst);
    std::uint64_t left = count * elem;
    auto at = static_cast<off_t>(static_cast<std::uint64_t>(e.direct_offset) + offset * elem);
    while (left > 0) {
      const ssize_t got = ::pread(m_fd, out, left, at);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail(m_path, t.name + ": read failed: " + std::strerror(errno));
      if (got == 0) fail(m_path, t.name + ": file is truncated");
      out += got;
      at += got;
      left -= static_cast<std::uint64_t>(got);
    }
    return;
  }
  const h5::CrashGuard guard(m_path);
  const std::uint64_t parts = parts_per_element(t);
  if (parts == 1) {
    h5::read_range(e.dataset.get(), e.mem_type.get(), t.shape, offset, count, dst, m_path, t.name);
    return;
  }
  // Complex numbers: HDF5 reads whole ones, so a range that starts or ends inside one goes through a copy.
  const std::uint64_t first = offset / parts, last = (offset + count + parts - 1) / parts;
  if (offset % parts == 0 && count % parts == 0) {
    h5::read_range(e.dataset.get(), e.mem_type.get(), stored_shape(t), first, last - first, dst, m_path, t.name);
    return;
  }
  const std::size_t part = dtype_size(t.dtype);
  std::vector<unsigned char> whole((last - first) * parts * part);
  h5::read_range(e.dataset.get(), e.mem_type.get(), stored_shape(t), first, last - first, whole.data(), m_path, t.name);
  std::memcpy(dst, whole.data() + (offset - first * parts) * part, count * part);
}

void Hdf5Reader::read_metadata() {
  struct Names {
    std::vector<std::string> names;
  } names;
  h5::check(H5Aiterate2(
                m_file.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr,
                [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
                  static_cast<Names*>(data)->names.emplace_back(name);
                  return 0;
                },
                &names),
            m_path, "cannot list the root attributes");
  for (const auto& n : names.names)
    if (auto text = h5::attribute_text(m_file.get(), n.c_str(), m_path)) m_metadata[n] = *text;
}

}  // namespace wavg
