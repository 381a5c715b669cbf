#include "hdf5/h5.hpp"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>

#include "hdf5/native_index.hpp"
#include "wavg/error.hpp"

namespace wavg::h5 {

namespace {

char g_guarded_file[4096];
std::atomic<const char*> g_guarded{nullptr};

// A corrupt file can make HDF5 fault on a bad address, abort on a heap it damaged (malloc's checks), or divide by
// a zero it read: any of these inside a guarded call is the guarded file's fault.
bool explain_hdf5_crash(int, const void*, const char*& file, const char*& what) noexcept {
  file = g_guarded.load(std::memory_order_acquire);
  what = "corrupt HDF5 file (the HDF5 library failed reading it)";
  return file != nullptr;
}

}  // namespace

CrashGuard::CrashGuard(const std::string& file) : m_previous(g_guarded.load()) {
  static const bool explained = [] {
    signals::set_fault_explainer(signals::FaultSource::library, explain_hdf5_crash);
    return true;
  }();
  (void)explained;
  if (!m_previous) {
    std::snprintf(g_guarded_file, sizeof g_guarded_file, "%s", file.c_str());
    g_guarded.store(g_guarded_file, std::memory_order_release);
  }
}

CrashGuard::~CrashGuard() {
  if (!m_previous) g_guarded.store(nullptr, std::memory_order_release);
}

void init() {
  static const bool done = [] {
    // No clean-up of HDF5's own at exit: it closes the files still open, and a file HDF5 failed to flush or close
    // (the copy of a damaged input 1, its metadata unwritable) stays open and made that clean-up fault after wavg
    // had printed its error. wavg closes every file it writes before it commits it; what is left open at exit is
    // read-only or about to be removed. Effective only as the first HDF5 call of the process.
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    // External links are a link class HDF5 registers for itself; without it, traversing one fails instead of
    // opening the file it names (H5Lunregister, HDF5 1.8+). wavg never creates or follows one.
    H5Lunregister(H5L_TYPE_EXTERNAL);
    H5Eclear2(H5E_DEFAULT);
    return true;
  }();
  (void)done;
}

void check_links(hid_t base, const std::string& name, const std::string& file, const std::string& prefix) {
  // Walks "a/b/c" as "a", "a/b", "a/b/c": H5Lget_info follows every component but the last, so each link is seen
  // before anything behind it is opened. It reports an external link's class even while the class is unregistered.
  for (std::size_t end = name.find('/');; end = name.find('/', end + 1)) {
    const std::string part = name.substr(0, end);
    H5L_info_t info{};
    const bool known = !part.empty() && H5Lget_info(base, part.c_str(), &info, H5P_DEFAULT) >= 0;
    H5Eclear2(H5E_DEFAULT);
    if (known && info.type != H5L_TYPE_HARD && info.type != H5L_TYPE_SOFT)
      fail(file, prefix + name + ": " + (part == name ? "is " : "is reached through ") +
                     (info.type == H5L_TYPE_EXTERNAL ? "an external link" : "a user-defined link") +
                     (part == name ? "" : " at " + prefix + part) + " (wavg reads no file but its inputs)");
    if (end == std::string::npos || !known) return;
  }
}

std::optional<H5O_type_t> object_type(hid_t loc, const char* name) {
  H5O_info_t info{};
  if (H5Oget_info_by_name2(loc, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  return info.type;
}

void check_storage(hid_t dcpl, const std::string& name, const std::string& file) {
  if (H5Pget_layout(dcpl) == H5D_VIRTUAL)
    fail(file, name + ": a virtual dataset (its elements live in other files; wavg reads no file but its inputs)");
  if (H5Pget_external_count(dcpl) != 0)
    fail(file, name + ": external storage (its elements live in other files; wavg reads no file but its inputs)");
}

namespace {
// Returns `what`, followed by HDF5's innermost error when there is one.
std::string with_stack(const std::string& what) {
  std::string stack = take_error_stack();
  return stack.empty() ? what : what + " (HDF5: " + stack + ")";
}
}  // namespace

Handle open_dataset(hid_t loc, const std::string& name, const std::string& file, const std::string& what) {
  // A directory that cannot exist: the prefix is joined to relative names only, which is where an accident would
  // otherwise resolve against the working directory (absolute names are refused by check_storage).
  static constexpr char k_nowhere[] = "/nonexistent/wavg-resolves-no-external-file/";
  // One list for every dataset, never closed (HDF5 closes it at exit): making one per dataset cost a tenth of
  // opening a small one.
  static const hid_t dapl = [] {
    const hid_t list = H5Pcreate(H5P_DATASET_ACCESS);
    if (list < 0 || (H5Pset_efile_prefix(list, k_nowhere) >= 0 && H5Pset_virtual_prefix(list, k_nowhere) >= 0))
      return list;
    H5Pclose(list);  // no dataset opens without the prefixes
    return hid_t{-1};
  }();
  if (dapl < 0) fail(file, with_stack("cannot set up HDF5"));
  return check(H5Dopen2(loc, name.c_str(), dapl), H5Dclose, file, what);
}

std::string take_error_stack() {
  std::string innermost;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        if (e->desc && *e->desc) *static_cast<std::string*>(data) = e->desc;
        return 0;
      },
      &innermost);
  H5Eclear2(H5E_DEFAULT);
  return innermost;
}

Handle check(hid_t id, Handle::Closer closer, const std::string& file, const std::string& what) {
  if (id < 0) fail(file, with_stack(what));
  return Handle(id, closer);
}

void check(herr_t status, const std::string& file, const std::string& what) {
  if (status < 0) fail(file, with_stack(what));
}

bool exists(htri_t answer, const std::string& file, const std::string& what) {
  if (answer < 0) fail(file, with_stack(what + " (corrupt HDF5 file)"));
  return answer > 0;
}

std::optional<std::vector<std::string>> read_string_list(hid_t object, const char* name, const std::string& file) {
  if (!exists(H5Aexists(object, name), file, std::string("cannot look for attribute ") + name)) return std::nullopt;
  const std::string what = std::string("cannot read attribute ") + name;
  Handle attr = check(H5Aopen(object, name, H5P_DEFAULT), H5Aclose, file, what);
  Handle type = check(H5Aget_type(attr.get()), H5Tclose, file, what);
  Handle space = check(H5Aget_space(attr.get()), H5Sclose, file, what);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) fail(file, with_stack(what));
  std::vector<std::string> out;
  if (H5Tget_class(type.get()) != H5T_STRING) {
    if (n == 0) return out;  // Keras: weight_names of a weightless layer is an empty float64 array
    fail(file, std::string("attribute ") + name + " is not a list of strings");
  }
  if (n == 0) return out;
  const auto count = static_cast<std::size_t>(n);
  if (H5Tis_variable_str(type.get()) > 0) {
    Handle mem = check(H5Tcopy(H5T_C_S1), H5Tclose, file, what);
    check(H5Tset_size(mem.get(), H5T_VARIABLE), file, what);
    check(H5Tset_cset(mem.get(), H5Tget_cset(type.get())), file, what);
    std::vector<char*> ptrs(count, nullptr);
    check(H5Aread(attr.get(), mem.get(), ptrs.data()), file, what);
    for (char* p : ptrs) out.emplace_back(p ? p : "");
    H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, ptrs.data());
  } else {
    const std::size_t size = H5Tget_size(type.get());
    if (size == 0 || size > (1u << 30) / count) fail(file, std::string("attribute ") + name + " is too large");
    std::vector<char> buf(size * count);
    check(H5Aread(attr.get(), type.get(), buf.data()), file, what);
    for (std::size_t i = 0; i < count; ++i) {
      const char* s = buf.data() + i * size;
      out.emplace_back(s, strnlen(s, size));  // fixed-length strings are NUL- or space-padded
      while (!out.back().empty() && out.back().back() == ' ') out.back().pop_back();
    }
  }
  return out;
}

std::optional<DType> dtype_of(hid_t t) {
  const std::size_t size = H5Tget_size(t);
  switch (H5Tget_class(t)) {
    case H5T_FLOAT: {
      // Only the exact IEEE layouts (and bfloat16) are tensors: HDF5 converts anything else bit by bit, and a
      // corrupt type with odd field positions is where its converter misbehaves.
      std::size_t spos, epos, esize, mpos, msize;
      if (H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize) < 0) return std::nullopt;
      const std::size_t ebias = H5Tget_ebias(t);
      auto is = [&](std::size_t sz, std::size_t es, std::size_t ms) {
        return size == sz && spos == sz * 8 - 1 && epos == ms && esize == es && mpos == 0 && msize == ms &&
               ebias == (std::size_t{1} << (es - 1)) - 1 && H5Tget_offset(t) == 0 && H5Tget_precision(t) == sz * 8;
      };
      if (is(2, 5, 10)) return DType::f16;
      if (is(2, 8, 7)) return DType::bf16;
      if (is(4, 8, 23)) return DType::f32;
      if (is(8, 11, 52)) return DType::f64;
      return std::nullopt;
    }
    case H5T_INTEGER: return h5native::integer_dtype(size, H5Tget_sign(t) == H5T_SGN_2);
    case H5T_ENUM:  // h5py stores numpy bool as an int8 enum {FALSE, TRUE}
      if (size == 1 && H5Tget_nmembers(t) == 2) return DType::boolean;
      return std::nullopt;
    default: return std::nullopt;
  }
}

std::optional<DType> complex_part(hid_t t) {
  if (H5Tget_class(t) != H5T_COMPOUND || H5Tget_nmembers(t) != 2) return std::nullopt;
  const Handle real(H5Tget_member_type(t, 0), H5Tclose), imag(H5Tget_member_type(t, 1), H5Tclose);
  if (real.get() < 0 || imag.get() < 0) return std::nullopt;
  const std::optional<DType> part = dtype_of(real.get());
  if (!part || (*part != DType::f32 && *part != DType::f64) || H5Tequal(real.get(), imag.get()) <= 0)
    return std::nullopt;
  const std::size_t size = dtype_size(*part);
  if (H5Tget_size(t) != 2 * size || H5Tget_member_offset(t, 0) != 0 || H5Tget_member_offset(t, 1) != size)
    return std::nullopt;
  const auto named = [&](unsigned i, const char* want) {
    char* name = H5Tget_member_name(t, i);
    const bool same = name && std::strcmp(name, want) == 0;
    H5free_memory(name);
    return same;
  };
  if (!named(0, "r") || !named(1, "i")) return std::nullopt;
  return part;
}

bool holds(hid_t file_type, const TensorInfo& t) {
  if (t.numbers == Numbers::complex) return complex_part(file_type) == t.dtype;
  return dtype_of(file_type) == t.dtype;
}

Handle memory_type(const TensorInfo& t, hid_t file_type) {
  if (t.numbers == Numbers::real) return memory_type(t.dtype, file_type);
  // h5py's layout, in native order: {r, i} of the part's type, packed.
  const std::size_t size = dtype_size(t.dtype);
  Handle c(H5Tcreate(H5T_COMPOUND, 2 * size), H5Tclose);
  const hid_t part = t.dtype == DType::f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
  H5Tinsert(c.get(), "r", 0, part);
  H5Tinsert(c.get(), "i", size, part);
  return c;
}

std::string unread_numbers(hid_t t) {
  const std::string bits = std::to_string(H5Tget_size(t) * 8) + "-bit";
  switch (H5Tget_class(t)) {
    case H5T_FLOAT: {
      std::size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
      H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize);
      return "a " + bits + " float type wavg does not read (" + std::to_string(esize) + "-bit exponent, bias " +
             std::to_string(H5Tget_ebias(t)) + ", " + std::to_string(msize) + "-bit mantissa" +
             (H5Tget_norm(t) == H5T_NORM_IMPLIED ? "" : ", no implied leading bit") +
             "); wavg reads IEEE float16, bfloat16, float32 and float64";
    }
    case H5T_INTEGER:
      return "a " + bits + " integer type wavg does not read (8, 16, 32 and 64 bits are read)";
    case H5T_COMPOUND: {
      const int n = H5Tget_nmembers(t);
      bool floats = n == 2;
      for (int i = 0; floats && i < n; ++i) floats = H5Tget_member_class(t, static_cast<unsigned>(i)) == H5T_FLOAT;
      if (!floats) return "";
      return "a compound of two floats (" + bits + ") that is not h5py's complex type (members r and i, both "
             "IEEE float32 or both float64, packed); wavg reads complex64 and complex128 as h5py writes them";
    }
    case H5T_ARRAY: {
      const Handle base(H5Tget_super(t), H5Tclose);
      const H5T_class_t cls = base.get() < 0 ? H5T_NO_CLASS : H5Tget_class(base.get());
      if (cls != H5T_FLOAT && cls != H5T_INTEGER) return "";
      return "an array of numbers per element (" + bits + "); wavg reads one number per element";
    }
    default: return "";
  }
}

Handle memory_type(DType dtype, hid_t file_type) {
  auto copy = [](hid_t t) { return Handle(H5Tcopy(t), H5Tclose); };
  auto small_float = [](std::size_t epos, std::size_t esize, std::size_t msize, std::size_t ebias) {
    Handle t(H5Tcopy(H5T_IEEE_F32LE), H5Tclose);
    H5Tset_fields(t.get(), 15, epos, esize, 0, msize);
    H5Tset_size(t.get(), 2);
    H5Tset_ebias(t.get(), ebias);
    return t;
  };
  switch (dtype) {
    case DType::f16: return small_float(10, 5, 10, 15);
    case DType::bf16: return small_float(7, 8, 7, 127);
    case DType::f32: return copy(H5T_NATIVE_FLOAT);
    case DType::f64: return copy(H5T_NATIVE_DOUBLE);
    case DType::i8: return copy(H5T_NATIVE_INT8);
    case DType::i16: return copy(H5T_NATIVE_INT16);
    case DType::i32: return copy(H5T_NATIVE_INT32);
    case DType::i64: return copy(H5T_NATIVE_INT64);
    case DType::u8: return copy(H5T_NATIVE_UINT8);
    case DType::u16: return copy(H5T_NATIVE_UINT16);
    case DType::u32: return copy(H5T_NATIVE_UINT32);
    case DType::u64: return copy(H5T_NATIVE_UINT64);
    case DType::boolean:
      if (file_type >= 0) return Handle(H5Tget_native_type(file_type, H5T_DIR_ASCEND), H5Tclose);
      {
        // A new dataset gets h5py's bool type, an int8 enum {FALSE = 0, TRUE = 1}, so h5py reads numpy bools and
        // wavg reads it back as bool (a plain uint8 would come back as uint8).
        Handle t(H5Tenum_create(H5T_NATIVE_INT8), H5Tclose);
        const signed char no = 0, yes = 1;
        H5Tenum_insert(t.get(), "FALSE", &no);
        H5Tenum_insert(t.get(), "TRUE", &yes);
        return t;
      }
  }
  return {};
}

std::vector<Box> flat_range_boxes(const Shape& shape, std::uint64_t offset, std::uint64_t count) {
  const std::size_t rank = shape.size();
  // stride[d] = number of elements in one step of dimension d-1, i.e. the product of dims d..rank-1.
  std::vector<std::uint64_t> stride(rank + 1, 1);
  for (std::size_t d = rank; d-- > 0;) stride[d] = stride[d + 1] * shape[d];
  std::vector<Box> boxes;
  while (count > 0) {
    // Take the outermost dimension j at which `offset` is aligned and at least one whole step remains; the box runs
    // along j from the current index, whole in every inner dimension.
    std::size_t j = rank - 1;
    for (std::size_t d = 0; d < rank; ++d) {
      if (offset % stride[d + 1] == 0 && count >= stride[d + 1]) {
        j = d;
        break;
      }
    }
    Box box;
    box.start.resize(rank);
    box.count.resize(rank);
    for (std::size_t d = 0; d < rank; ++d) {
      box.start[d] = (offset / stride[d + 1]) % shape[d];
      box.count[d] = d < j ? 1 : shape[d];
    }
    const std::uint64_t steps = std::min<std::uint64_t>(count / stride[j + 1], shape[j] - box.start[j]);
    box.count[j] = steps;
    for (std::size_t d = j + 1; d < rank; ++d) box.start[d] = 0;
    boxes.push_back(std::move(box));
    offset += steps * stride[j + 1];
    count -= steps * stride[j + 1];
  }
  return boxes;
}

namespace {

enum class Direction { read, write };

void transfer_range(Direction dir, hid_t dataset, hid_t mem_type, const Shape& shape, std::uint64_t offset,
                    std::uint64_t count, void* buf, const std::string& file, const std::string& name) {
  const std::string what = (dir == Direction::read ? "cannot read " : "cannot write ") + name;
  if (shape.empty()) {
    WAVG_ASSERT(offset == 0 && count == 1);
    herr_t st = dir == Direction::read ? H5Dread(dataset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf)
                                       : H5Dwrite(dataset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    check(st, file, what);
    return;
  }
  Handle fspace = check(H5Dget_space(dataset), H5Sclose, file, what);
  bool first = true;
  for (const Box& b : flat_range_boxes(shape, offset, count)) {
    check(H5Sselect_hyperslab(fspace.get(), first ? H5S_SELECT_SET : H5S_SELECT_OR, b.start.data(), nullptr,
                              b.count.data(), nullptr),
          file, what);
    first = false;
  }
  const hsize_t n = count;
  Handle mspace = check(H5Screate_simple(1, &n, nullptr), H5Sclose, file, what);
  herr_t st = dir == Direction::read ? H5Dread(dataset, mem_type, mspace.get(), fspace.get(), H5P_DEFAULT, buf)
                                     : H5Dwrite(dataset, mem_type, mspace.get(), fspace.get(), H5P_DEFAULT, buf);
  check(st, file, what);
}

}  // namespace

void read_range(hid_t dataset, hid_t mem_type, const Shape& shape, std::uint64_t offset, std::uint64_t count, void* dst,
                const std::string& file, const std::string& name) {
  transfer_range(Direction::read, dataset, mem_type, shape, offset, count, dst, file, name);
}

void write_range(hid_t dataset, hid_t mem_type, const Shape& shape, std::uint64_t offset, std::uint64_t count,
                 const void* src, const std::string& file, const std::string& name) {
  transfer_range(Direction::write, dataset, mem_type, shape, offset, count, const_cast<void*>(src), file, name);
}

std::optional<std::string> attribute_text(hid_t object, const char* name, const std::string& file) {
  const std::string what = std::string("cannot read attribute ") + name;
  Handle attr = check(H5Aopen(object, name, H5P_DEFAULT), H5Aclose, file, what);
  Handle type = check(H5Aget_type(attr.get()), H5Tclose, file, what);
  Handle space = check(H5Aget_space(attr.get()), H5Sclose, file, what);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls == H5T_STRING) {
    const auto list = read_string_list(object, name, file);
    if (!list) return std::nullopt;
    std::string joined;
    for (const auto& s : *list) joined += (joined.empty() ? "" : ",") + s;
    return joined;
  }
  if (n == 1 && (cls == H5T_INTEGER || cls == H5T_FLOAT)) {
    double v = 0;
    check(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &v), file, what);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string(buf);
  }
  return std::nullopt;  // arrays of numbers, compounds, references: not metadata wavg shows
}

}  // namespace wavg::h5
