#include "hdf5/hdf5_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "hdf5/h5.hpp"
#include "hdf5/hdf5_reader.hpp"
#include "hdf5/template_copy.hpp"
#include "read_back.hpp"
#include "wavg/error.hpp"

namespace wavg {

namespace {

hid_t file_type_for(DType t) {
  switch (t) {
    case DType::f32: return H5T_IEEE_F32LE;
    case DType::f64: return H5T_IEEE_F64LE;
    case DType::i8: return H5T_STD_I8LE;
    case DType::i16: return H5T_STD_I16LE;
    case DType::i32: return H5T_STD_I32LE;
    case DType::i64: return H5T_STD_I64LE;
    case DType::u8: return H5T_STD_U8LE;
    case DType::u16: return H5T_STD_U16LE;
    case DType::u32: return H5T_STD_U32LE;
    case DType::u64: return H5T_STD_U64LE;
    default: return H5I_INVALID_HID;  // f16, bf16, bool (and complex numbers): built by h5::memory_type
  }
}

class Hdf5Writer final : public Writer {
 public:
  Hdf5Writer(const std::string& tmp_path, const std::string& display_path, const OutputSpec& spec)
      : m_tmp(tmp_path), m_display(display_path), m_spec(spec) {
    h5::init();
    m_template = dynamic_cast<Hdf5Reader*>(spec.template_input);
    if (m_template) {
      copy_template();
    } else {
      create_fresh();
    }
  }

  ~Hdf5Writer() override {
    m_datasets.clear();
    m_file.reset();
    if (m_fd >= 0) ::close(m_fd);
  }

  bool holds_template_values(std::size_t index) const override {
    return m_template && index < m_source.size() && !m_retyped[index];
  }

  void write(std::size_t index, std::uint64_t offset, std::uint64_t count, const void* src) override {
    const TensorInfo& t = m_spec.tensors[index];
    const std::size_t elem = dtype_size(t.dtype);
    if (m_template && !m_retyped[index]) {
      const std::int64_t at = m_template->direct_offset(m_source[index]);
      if (at >= 0) {
        const std::uint64_t begin = static_cast<std::uint64_t>(at) + offset * elem, bytes = count * elem;
        pwrite_all(static_cast<const char*>(src), bytes, begin, t);
        // The engine writes a tensor whole, block after block: once written it is no longer a hole to fill.
        m_pending[index] = {0, 0};
        // Start writing this block to disk now, so the flush before the rename finds little left to do.
        ::sync_file_range(m_fd, static_cast<off_t>(begin), static_cast<off_t>(bytes), SYNC_FILE_RANGE_WRITE);
        return;
      }
    }
    const h5::CrashGuard guard(m_template ? m_template->path() : m_display);
    open_file();
    auto& ds = m_datasets[index];
    if (!ds.first) {
      ds.first = h5::open_dataset(m_file.get(), t.name, m_display, "cannot open dataset " + t.name);
      h5::Handle ftype = h5::check(H5Dget_type(ds.first.get()), H5Tclose, m_display, "cannot open " + t.name);
      ds.second = h5::memory_type(t, ftype.get());
    }
    // The engine's blocks hold whole complex numbers (both parts): write them as such.
    const std::uint64_t parts = parts_per_element(t);
    WAVG_ASSERT(offset % parts == 0 && count % parts == 0);
    h5::write_range(ds.first.get(), ds.second.get(), stored_shape(t), offset / parts, count / parts, src, m_display,
                    t.name);
  }

  void finish() override {
    const h5::CrashGuard guard(m_template ? m_template->path() : m_display);
    if (m_copy) fill_pending();
    if (m_template && !m_spec.dropped.empty()) {
      open_file();
      for (const std::string& name : m_spec.dropped)
        if (H5Lexists(m_file.get(), name.c_str(), H5P_DEFAULT) > 0)
          h5::check(H5Ldelete(m_file.get(), name.c_str(), H5P_DEFAULT), m_display, "cannot remove " + name);
      H5Eclear2(H5E_DEFAULT);
    }
    write_provenance();
    m_datasets.clear();
    if (m_file) {
      h5::check(H5Fflush(m_file.get(), H5F_SCOPE_GLOBAL), m_display, "cannot flush the output");
      m_file.reset();
    }
    if (m_fd >= 0) {
      if (::close(m_fd) != 0) fail(m_display, std::string("cannot close the output: ") + std::strerror(errno));
      m_fd = -1;
    }
    if (m_template) verify_output();
  }

 private:
  void copy_template() {
    refuse_listed_drops();
    m_fd = ::open(m_tmp.c_str(), O_WRONLY | O_CLOEXEC);
    if (m_fd < 0) fail(m_display, std::strerror(errno));
    std::unordered_map<std::string_view, std::size_t> by_name;
    const auto& tt = m_template->tensors();
    for (std::size_t i = 0; i < tt.size(); ++i) by_name.emplace(tt[i].name, i);
    std::vector<ByteRange> holes;
    for (const TensorInfo& t : m_spec.tensors) {
      auto it = by_name.find(t.name);
      WAVG_ASSERT(it != by_name.end());
      m_source.push_back(it->second);
      m_retyped.push_back(!same_element_type(tt[it->second], t));
      m_pending.push_back(direct_range(m_source.size() - 1));
      if (m_pending.back().second > m_pending.back().first) holes.push_back(m_pending.back());
    }
    m_copy.emplace(m_template->path(), m_fd, std::move(holes), m_display);
    // A tensor whose dtype changes (--out-dtype) gets a new dataset of the new type in place of the old one; the
    // groups and attributes around it stay as in input 1.
    for (std::size_t i = 0; i < m_spec.tensors.size(); ++i) {
      if (!m_retyped[i]) continue;
      open_file();
      const TensorInfo& t = m_spec.tensors[i];
      h5::check(H5Ldelete(m_file.get(), t.name.c_str(), H5P_DEFAULT), m_display, "cannot replace " + t.name);
      m_datasets.emplace(i, create_dataset(t, H5P_DEFAULT));
    }
  }

  // A tensor left out of the output (--exclude, --tensors intersection) is unlinked from the copy; one that input
  // 1's Keras layout lists would leave the layout naming a dataset that is gone, which no reader (Keras, wavg)
  // accepts. Refused before anything is written, naming the first one.
  void refuse_listed_drops() const {
    const auto& tt = m_template->tensors();
    const std::unordered_set<std::string_view> dropped(m_spec.dropped.begin(), m_spec.dropped.end());
    for (std::size_t i = 0; i < tt.size(); ++i)
      if (const std::string& name = tt[i].name; dropped.contains(name) && m_template->listed_by_layout(i))
        fail(m_display, "cannot leave " + name + " out: the output copies the tree of a " + m_template->layout() +
                            " input, whose layout lists it, so the copy would not load; leave it in, or write "
                            "another format (.safetensors, .json)");
  }

  // Reads the finished copy back (through the structure probe, as any input) and compares it with what was meant:
  // the planned tensors with their dtypes and shapes, and input 1's root attributes. Data over metadata that the
  // reader could not see at open time (a heap, a B-tree) shows here as an error, not as an unreadable output.
  void verify_output() {
    std::unique_ptr<Hdf5Reader> back;
    const auto broken = [&](const std::string& what) {
      fail(m_display, "the output does not read back as written (" + what +
                          "): input 1's data overlaps its own metadata (corrupt HDF5 file)");
    };
    try {
      back = std::make_unique<Hdf5Reader>(m_tmp);
    } catch (const Error& e) {
      broken(e.problems().empty() ? std::string(e.what()) : e.problems().front().what);
    }
    if (const auto difference = read_back_difference(back->tensors(), m_spec.tensors)) broken(*difference);
    const auto provenance = m_spec.provenance.entries();
    auto meta = back->metadata();
    for (const auto& [key, value] : m_template->metadata())
      if (!provenance.count(key) && meta[key] != value) broken("root attribute " + key + " changed");
  }

  // Returns the bytes of output tensor `index` in the copy when they are patched in place, else an empty range
  // (written through HDF5, or retyped into a new dataset).
  ByteRange direct_range(std::size_t index) const {
    const std::int64_t at = m_template->direct_offset(m_source[index]);
    if (at < 0 || m_retyped[index]) return {0, 0};
    const auto begin = static_cast<std::uint64_t>(at);
    return {begin, begin + m_spec.tensors[index].bytes()};
  }

  // Fills the holes of tensors that were never written (not averaged: input 1's values stay).
  void fill_pending() {
    for (const ByteRange& r : m_pending)
      if (r.second > r.first) m_copy->fill(r);
    m_pending.clear();
  }

  std::pair<h5::Handle, h5::Handle> create_dataset(const TensorInfo& t, hid_t lcpl) {
    const std::string what = "cannot create dataset " + t.name;
    const Shape shape = stored_shape(t);
    std::vector<hsize_t> dims(shape.begin(), shape.end());
    h5::Handle space = h5::check(
        shape.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
        H5Sclose, m_display, what);
    h5::Handle mem = h5::memory_type(t, H5I_INVALID_HID);
    const hid_t ftype =
        t.numbers == Numbers::real && file_type_for(t.dtype) >= 0 ? file_type_for(t.dtype) : mem.get();
    h5::Handle ds =
        h5::check(H5Dcreate2(m_file.get(), t.name.c_str(), ftype, space.get(), lcpl, H5P_DEFAULT, H5P_DEFAULT),
                  H5Dclose, m_display, what);
    return {std::move(ds), std::move(mem)};
  }

  // Records the provenance as scalar UTF-8 string attributes on the root group, replacing any left by an earlier
  // wavg run on input 1.
  void write_provenance() {
    if (m_spec.provenance.empty()) return;
    open_file();
    const hid_t root = m_file.get();
    h5::Handle type = h5::check(H5Tcopy(H5T_C_S1), H5Tclose, m_display, "cannot set up HDF5");
    H5Tset_size(type.get(), H5T_VARIABLE);
    H5Tset_cset(type.get(), H5T_CSET_UTF8);
    h5::Handle space = h5::check(H5Screate(H5S_SCALAR), H5Sclose, m_display, "cannot set up HDF5");
    for (const auto& [key, value] : m_spec.provenance.entries()) {
      if (H5Aexists(root, key.c_str()) > 0)
        h5::check(H5Adelete(root, key.c_str()), m_display, "cannot replace attribute " + key);
      h5::Handle attr = h5::check(H5Acreate2(root, key.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                                  H5Aclose, m_display, "cannot write attribute " + key);
      const char* text = value.c_str();
      h5::check(H5Awrite(attr.get(), type.get(), &text), m_display, "cannot write attribute " + key);
    }
    H5Eclear2(H5E_DEFAULT);
  }

  void create_fresh() {
    m_file = h5::check(H5Fcreate(m_tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, m_display,
                       "cannot create the output");
    h5::Handle lcpl = h5::check(H5Pcreate(H5P_LINK_CREATE), H5Pclose, m_display, "cannot set up HDF5");
    H5Pset_create_intermediate_group(lcpl.get(), 1);
    for (std::size_t i = 0; i < m_spec.tensors.size(); ++i)
      m_datasets.emplace(i, create_dataset(m_spec.tensors[i], lcpl.get()));
  }

  void open_file() {
    if (m_file) return;
    m_file =
        h5::check(H5Fopen(m_tmp.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose, m_display, "cannot reopen the output");
  }

  void pwrite_all(const char* src, std::uint64_t bytes, std::uint64_t at, const TensorInfo& t) {
    while (bytes > 0) {
      const ssize_t n = ::pwrite(m_fd, src, bytes, static_cast<off_t>(at));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(m_display, t.name + ": write failed: " + std::strerror(errno));
      src += n;
      at += static_cast<std::uint64_t>(n);
      bytes -= static_cast<std::uint64_t>(n);
    }
  }

  std::string m_tmp, m_display;
  const OutputSpec& m_spec;
  Hdf5Reader* m_template = nullptr;
  std::vector<std::size_t> m_source;  // output index -> template tensor index
  std::optional<TemplateCopy> m_copy;
  std::vector<ByteRange> m_pending;  // output index -> its hole in the copy, until written ({0, 0} when none)
  std::vector<bool> m_retyped;       // output index -> dtype differs from the template's (a new dataset)
  int m_fd = -1;
  h5::Handle m_file;
  std::unordered_map<std::size_t, std::pair<h5::Handle, h5::Handle>> m_datasets;  // dataset, memory type
};

}  // namespace

std::unique_ptr<Writer> create_hdf5_writer(const std::string& tmp_path, const std::string& display_path,
                                           const OutputSpec& spec) {
  return std::make_unique<Hdf5Writer>(tmp_path, display_path, spec);
}

}  // namespace wavg
