#include "hdf5/hdf5_reader.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <utility>

#include "wavg/mapped_file.hpp"
#include "wavg/error.hpp"

namespace wavg {

namespace {
constexpr char k_signature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
}

bool looks_like_hdf5(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char buf[8];
  for (std::uint64_t at = 0; at <= (1u << 20); at = at ? at * 2 : 512) {
    in.seekg(static_cast<std::streamoff>(at));
    if (!in.read(buf, 8)) return false;
    if (std::memcmp(buf, k_signature, 8) == 0) return true;
  }
  return false;
}

namespace {

constexpr int k_probe_seconds = 10;
constexpr std::uint64_t k_probe_memory = 1ull << 30;

enum ProbeExit : int { probe_ok = 0, probe_error = 2, probe_out_of_memory = 3 };

// Reads the current virtual size, so the probe's memory limit is "what it has now plus k_probe_memory".
std::uint64_t virtual_size() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  if (f) {
    if (std::fscanf(f, "%llu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  return pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// Opens the file's structure (and its root metadata) once in a child process before this process trusts HDF5
// with it. HDF5 1.10 can loop forever, fault, or allocate gigabytes on a corrupt global heap (where
// variable-length strings such as layer_names live) or object header. The child runs under a time and memory
// limit; its fate tells, and this process reports a corrupt file instead of hanging, crashing or swapping. A clean
// error in the child is passed up through a pipe, so the parent never repeats what failed. Parsing the structure
// takes milliseconds even for large models, so the probe costs a fork, not a re-read of the data.
void probe_structure(const std::string& path) {
  int fds[2];
  // Close-on-exec: a program another thread starts must not hold the write end open, or no end-of-file comes.
  if (::pipe2(fds, O_CLOEXEC) != 0) return;  // no probe possible: proceed unguarded rather than refuse the file
  std::fflush(nullptr);
  const std::uint64_t limit = virtual_size() + k_probe_memory;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  if (pid == 0) {
    ::close(fds[0]);
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) ::dup2(devnull, STDERR_FILENO);
    const struct rlimit rl{limit, limit};
    ::setrlimit(RLIMIT_AS, &rl);
    int code = probe_ok;
    try {
      Hdf5Reader reader(path, Hdf5Reader::Probe::no);
    } catch (const Error& e) {
      const std::string what = e.problems().empty() ? "unreadable" : e.problems().front().what;
      (void)!::write(fds[1], what.data(), what.size());  // a lost message still leaves probe_error
      code = probe_error;
    } catch (const std::bad_alloc&) {
      code = probe_out_of_memory;
    } catch (...) {
      code = probe_error;
    }
    ::_exit(code);
  }
  ::close(fds[1]);
  // The pipe reaches end-of-file when the child exits: waiting on it returns as soon as the probe is done (under a
  // millisecond for a small file) rather than at the next tick of a polling loop, which cost 2.5 ms an input.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(k_probe_seconds);
  const auto timed_out = [&] { return std::chrono::steady_clock::now() >= deadline; };
  std::string message;
  char buf[512];
  for (bool eof = false; !eof;) {
    if (timed_out()) {
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, 100);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) message.append(buf, static_cast<std::size_t>(n));
    else eof = n == 0 || errno != EINTR;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return;
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && timed_out())
    fail(path, "corrupt HDF5 file (the HDF5 library did not finish reading its structure in " +
                   std::to_string(k_probe_seconds) + " s)");
  if (WIFEXITED(status) && WEXITSTATUS(status) == probe_ok) return;
  if (WIFEXITED(status) && WEXITSTATUS(status) == probe_error && !message.empty()) fail(path, message);
  if (WIFEXITED(status) && WEXITSTATUS(status) == probe_out_of_memory)
    fail(path, "corrupt HDF5 file (reading its structure needs more than 1 GiB)");
  fail(path, "corrupt HDF5 file (the HDF5 library failed reading its structure)");
}

// Tells whether the file has a Keras model_weights group with its layer_names; a model_weights group without them
// (a Keras model converted from safetensors, say) is read as plain HDF5.
bool has_keras_model_weights(hid_t root) {
  if (H5Lexists(root, "model_weights", H5P_DEFAULT) <= 0) return false;
  const bool listed = H5Aexists_by_name(root, "model_weights", "layer_names", H5P_DEFAULT) > 0 ||
                      H5Aexists_by_name(root, "model_weights", "layer_names0", H5P_DEFAULT) > 0;
  H5Eclear2(H5E_DEFAULT);
  return listed;
}

}  // namespace

Hdf5Reader::Hdf5Reader(std::string path, Probe probe) : m_path(std::move(path)) {
  h5::init();
  if (probe == Probe::yes) probe_structure(m_path);
  const h5::CrashGuard guard(m_path);
  try {
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

void Hdf5Reader::open_tree() {
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
  const hid_t root = m_file.get();

  if (auto layers = h5::read_keras_names(root, "layer_names", m_path)) {
    m_layout = "Keras 2 weights";
    add_keras_layers(root, "");
  } else if (has_keras_model_weights(root)) {
    h5::Handle mw = h5::check(H5Gopen2(root, "model_weights", H5P_DEFAULT), H5Gclose, m_path,
                              "cannot open group model_weights");
    m_layout = "Keras 2 model";
    add_keras_layers(mw.get(), "model_weights/");
    if (H5Lexists(root, "optimizer_weights", H5P_DEFAULT) > 0) {
      h5::Handle ow = h5::check(H5Gopen2(root, "optimizer_weights", H5P_DEFAULT), H5Gclose, m_path,
                                "cannot open group optimizer_weights");
      if (auto names = h5::read_keras_names(ow.get(), "weight_names", m_path))
        add_named_weights(ow.get(), "optimizer_weights/", *names, "optimizer_weights");
    }
  } else if (H5Lexists(root, "layers", H5P_DEFAULT) > 0 && H5Lexists(root, "vars", H5P_DEFAULT) > 0) {
    // Keras 3 writes no root attributes, but wavg's provenance adds some: recognise the tree, not their absence.
    m_layout = "Keras 3 weights";
    add_keras3_tree(root, "");
  } else {
    m_layout = "plain HDF5";
    add_plain_tree();
  }
  read_metadata();
  H5Eclear2(H5E_DEFAULT);
  map_file();
}

Hdf5Reader::~Hdf5Reader() {
  {
    const h5::CrashGuard guard(m_path);
    close_handles();
  }
  if (m_fd >= 0) ::close(m_fd);  // the mapping, unmapped after this, does not need it
}

void Hdf5Reader::add_keras_layers(hid_t parent, const std::string& prefix) {
  const auto layers = *h5::read_keras_names(parent, "layer_names", m_path);
  for (const std::string& layer : layers) {
    if (H5Lexists(parent, layer.c_str(), H5P_DEFAULT) <= 0)
      fail(m_path, "layer_names lists " + layer + " but there is no group " + prefix + layer);
    h5::Handle g = h5::check(H5Gopen2(parent, layer.c_str(), H5P_DEFAULT), H5Gclose, m_path,
                             "cannot open layer group " + prefix + layer);
    auto names = h5::read_keras_names(g.get(), "weight_names", m_path);
    if (!names) fail(m_path, "layer group " + prefix + layer + " has no weight_names attribute");
    add_named_weights(g.get(), prefix + layer + "/", *names, prefix + layer);
  }
}

void Hdf5Reader::add_named_weights(hid_t group, const std::string& prefix, const std::vector<std::string>& names,
                                   const std::string& owner) {
  for (const std::string& w : names) {
    // H5Lexists checks one link at a time, so walk the intermediate groups of "dense/kernel:0".
    std::string partial;
    bool found = !w.empty();
    for (std::size_t start = 0; found && start <= w.size();) {
      std::size_t slash = w.find('/', start);
      partial = w.substr(0, slash);
      found = H5Lexists(group, partial.c_str(), H5P_DEFAULT) > 0;
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    H5Eclear2(H5E_DEFAULT);
    if (!found) fail(m_path, owner + " lists weight " + w + " but there is no dataset " + prefix + w);
    add_dataset(prefix + w, true);
  }
}

namespace {

// Lists the links of a group in name order (HDF5's own order without creation-order tracking, which h5py leaves
// off).
std::vector<std::string> child_names(hid_t group, const std::string& file) {
  std::vector<std::string> names;
  auto cb = [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
    static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
  };
  h5::check(H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, cb, &names), file, "cannot list a group");
  return names;
}

// Compares names with digit runs taken as numbers: "2" < "10", "dense" < "dense_1" < "dense_2" < "dense_10".
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])), db = std::isdigit(static_cast<unsigned char>(b[j]));
    if (da && db) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      const std::string na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      const std::size_t za = na.find_first_not_of('0'), zb = nb.find_first_not_of('0');
      const std::string ta = za == std::string::npos ? "" : na.substr(za), tb = zb == std::string::npos ? "" : nb.substr(zb);
      if (ta.size() != tb.size()) return ta.size() < tb.size();
      if (ta != tb) return ta < tb;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::vector<std::string> sorted_children(hid_t group, const std::string& file) {
  auto names = child_names(group, file);
  std::sort(names.begin(), names.end(), natural_less);
  return names;
}

}  // namespace

// Keras 3 (saving/saving_lib.py, H5IOStore): each object's variables are datasets vars/0, vars/1, ... and its
// children are groups under layers/ (nested models), then optimizer/vars/..., then the model's own vars/. Indices
// and auto layer names are sorted with numbers compared as numbers; HDF5 lists them as text (0, 1, 10, 2, ...).
void Hdf5Reader::add_keras3_tree(hid_t group, const std::string& prefix) {
  for (const char* part : {"layers", "optimizer", "vars"}) {
    if (H5Lexists(group, part, H5P_DEFAULT) <= 0) continue;
    h5::Handle g = h5::check(H5Gopen2(group, part, H5P_DEFAULT), H5Gclose, m_path,
                             "cannot open group " + prefix + part);
    const std::string here = prefix + part + "/";
    if (std::string_view(part) == "vars") {
      for (const std::string& v : sorted_children(g.get(), m_path)) add_dataset(here + v, true);
    } else if (std::string_view(part) == "optimizer") {
      add_keras3_tree(g.get(), here);
    } else {
      for (const std::string& layer : sorted_children(g.get(), m_path)) {
        h5::Handle lg = h5::check(H5Gopen2(g.get(), layer.c_str(), H5P_DEFAULT), H5Gclose, m_path,
                                  "cannot open group " + here + layer);
        add_keras3_tree(lg.get(), here + layer + "/");
      }
    }
  }
  H5Eclear2(H5E_DEFAULT);
}

void Hdf5Reader::add_plain_tree() {
  struct Visit {
    std::vector<std::string> names;
  } visit;
  auto cb = [](hid_t g, const char* name, const H5L_info_t* info, void* data) -> herr_t {
    if (info->type != H5L_TYPE_HARD) return 0;
    h5::Handle obj(H5Oopen(g, name, H5P_DEFAULT), H5Oclose);
    if (obj && H5Iget_type(obj.get()) == H5I_DATASET) static_cast<Visit*>(data)->names.emplace_back(name);
    return 0;
  };
  h5::check(H5Lvisit(m_file.get(), H5_INDEX_NAME, H5_ITER_INC, cb, &visit), m_path, "cannot walk the HDF5 tree");
  for (const auto& name : visit.names) add_dataset(name, false);
}

void Hdf5Reader::add_dataset(const std::string& name, bool listed) {
  const std::string what = "cannot open dataset " + name;
  h5::Handle ds = h5::check(H5Dopen2(m_file.get(), name.c_str(), H5P_DEFAULT), H5Dclose, m_path, what);
  h5::Handle type = h5::check(H5Dget_type(ds.get()), H5Tclose, m_path, what);
  const auto dtype = h5::dtype_of(type.get());
  if (!dtype) {
    if (listed) fail(m_path, name + ": unsupported element type (not a number)");
    return;  // strings, compounds: kept in the output by the writer's copy, never averaged
  }
  h5::Handle space = h5::check(H5Dget_space(ds.get()), H5Sclose, m_path, what);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > H5S_MAX_RANK) fail(m_path, name + ": unreadable dataspace");
  if (H5Sget_simple_extent_type(space.get()) == H5S_NULL) return;  // no values at all
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
    fail(m_path, name + ": unreadable dataspace");
  TensorInfo info{name, *dtype, Shape(dims.begin(), dims.end())};
  std::uint64_t count = 0;
  if (!checked_count(info.shape, dtype_size(*dtype), count))
    fail(m_path, name + ": shape " + shape_string(info.shape) + " overflows");

  Entry entry;
  entry.mem_type = h5::memory_type(*dtype, type.get());
  // The direct path: contiguous storage, no filters or external files, file type equal to the memory type, and
  // the whole extent inside the file.
  h5::Handle dcpl = h5::check(H5Dget_create_plist(ds.get()), H5Pclose, m_path, what);
  if (H5Pget_layout(dcpl.get()) == H5D_CONTIGUOUS && H5Pget_nfilters(dcpl.get()) == 0 &&
      H5Pget_external_count(dcpl.get()) == 0 && H5Tequal(type.get(), entry.mem_type.get()) > 0) {
    const haddr_t addr = H5Dget_offset(ds.get());
    const std::uint64_t bytes = count * dtype_size(*dtype);
    if (addr != HADDR_UNDEF && addr <= m_file_size && bytes <= m_file_size - addr &&
        H5Dget_storage_size(ds.get()) == bytes)
      entry.direct_offset = static_cast<std::int64_t>(addr);
  }
  H5Eclear2(H5E_DEFAULT);
  entry.dataset = std::move(ds);
  m_tensors.push_back(std::move(info));
  m_entries.push_back(std::move(entry));
}

void Hdf5Reader::map_file() {
  bool any_direct = false;
  for (const Entry& e : m_entries) any_direct = any_direct || e.direct_offset >= 0;
  if (!any_direct || m_file_size == 0) return;
  try {
    m_map.emplace(m_path, m_fd);
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
  // Kernels load whole elements; a dataset at an odd offset is copied into an aligned buffer by read() instead.
  if (begin % dtype_size(m_tensors[index].dtype) != 0) return nullptr;
  return m_map->data() + begin;
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
  h5::read_range(e.dataset.get(), e.mem_type.get(), t.shape, offset, count, dst, m_path, t.name);
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
