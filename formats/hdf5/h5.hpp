#pragma once
// The one checked wrapper around the HDF5 C API used by the HDF5 codec. Every hid_t is owned by an H5Handle; every
// call that can fail goes through check(), which turns HDF5's error stack into one line of a wavg::Error. HDF5's
// own printing of error stacks is switched off once, before the first call.

#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wavg/signals.hpp"
#include "wavg/tensor.hpp"

namespace wavg::h5 {

// Silences HDF5's automatic error printing and unregisters HDF5's external-link class, so that no link in any
// file can make the library open another file (a traversal through one fails). Idempotent.
void init();

// While alive, turns a crash inside the HDF5 library (SIGSEGV, SIGBUS, SIGABRT, SIGFPE) into the usual one-line error
// naming `file` and exit 1, with pending outputs removed (through signals.hpp, which owns the handlers). HDF5 1.10
// trusts some on-disk sizes, notably of global heap objects that hold variable-length strings (CVE-2020-10811 and kin),
// and reads out of bounds on such corrupt files; nothing wavg can check first reaches those bytes through the public
// API. Guards nest.
class CrashGuard {
 public:
  explicit CrashGuard(const std::string& file);
  ~CrashGuard();
  CrashGuard(const CrashGuard&) = delete;
  CrashGuard& operator=(const CrashGuard&) = delete;

 private:
  const char* m_previous;
  signals::FaultScope m_faults;
};

class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : m_id(id), m_closer(closer) {}
  Handle(Handle&& o) noexcept : m_id(o.m_id), m_closer(o.m_closer) { o.m_id = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      m_id = o.m_id;
      m_closer = o.m_closer;
      o.m_id = H5I_INVALID_HID;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  hid_t get() const { return m_id; }
  explicit operator bool() const { return m_id >= 0; }
  void reset() {
    if (m_id >= 0 && m_closer) m_closer(m_id);
    m_id = H5I_INVALID_HID;
  }

 private:
  hid_t m_id = H5I_INVALID_HID;
  Closer m_closer = nullptr;
};

// Returns the innermost message of HDF5's current error stack and clears it.
std::string take_error_stack();

// Throws Error(runtime) naming `file` when `id` is negative; otherwise wraps it in a handle closed by `closer`.
Handle check(hid_t id, Handle::Closer closer, const std::string& file, const std::string& what);
// Throws Error(runtime) naming `file` when `status` is negative.
void check(herr_t status, const std::string& file, const std::string& what);
// Returns what H5Lexists or H5Aexists answered (`answer`); a failure (negative: HDF5 could not read the object that
// would hold it) throws Error naming `file` and `what` instead of passing for "absent", which would read a damaged
// Keras file's layout as plain HDF5 and give its optimizer state the roles of weights.
bool exists(htri_t answer, const std::string& file, const std::string& what);

// The type of the object that the hard link `name` under `loc` points to, read from its header without opening it
// (H5Oget_info, basic fields). Opening it would not do: HDF5 refuses to open a dataset already open with other
// access properties (open_dataset's prefixes) and the same file opened twice, as an input given twice or through a
// symlink is, shares its open datasets; a failed open would pass for "not a dataset" and the tensor go unread.
// nullopt when HDF5 cannot read the header, which the caller reports naming the object.
std::optional<H5O_type_t> object_type(hid_t loc, const char* name);

// Refuses a path whose links leave the file: an external link, or a user-defined link, anywhere from `base` down
// to the object `name` (named `prefix` + `name` in the message, `prefix` being the path of `base`). wavg reads
// and writes no file but its inputs and its output.
void check_links(hid_t base, const std::string& name, const std::string& file, const std::string& prefix = "");
// Refuses (naming `name`) a dataset whose elements live outside the file: external raw-data storage
// (H5Pset_external) or a virtual dataset. Writing the mean into a copy of such a file would write into the files
// it names.
void check_storage(hid_t dcpl, const std::string& name, const std::string& file);
// Opens a dataset with an access property list whose external-file and virtual-source prefixes name a directory
// that does not exist, so a relative name in a file is never resolved even where a check was missed.
Handle open_dataset(hid_t loc, const std::string& name, const std::string& file, const std::string& what);

// Reads a string or string-array attribute (fixed or variable length, any charset). An empty numeric array, which
// Keras writes for layers without weights, reads as an empty list. Returns nullopt when the attribute is absent.
std::optional<std::vector<std::string>> read_string_list(hid_t object, const char* name, const std::string& file);

// Maps an HDF5 file type to a wavg dtype, or nullopt for types that are not tensors (strings, compounds, ...).
std::optional<DType> dtype_of(hid_t file_type);
// Returns the float type of each part when `file_type` is h5py's complex (a compound of two members r and i, each
// the same IEEE float32 or float64 that dtype_of reads, packed: numpy's complex64 / complex128), else nullopt.
std::optional<DType> complex_part(hid_t file_type);
// Tells whether a dataset of `file_type` holds the numbers `t` says (dtype_of, or complex_part for complex ones).
bool holds(hid_t file_type, const TensorInfo& t);
// Returns a memory type for `t`'s elements in native byte order (h5py's complex compound for complex numbers; for
// bool, the file's own enum when `file_type` is given), owned by the caller.
Handle memory_type(const TensorInfo& t, hid_t file_type);
// Says what numbers a type holds that dtype_of has no dtype for (a long double, a float with another exponent bias,
// a compound of two floats that is not h5py's complex, an array of numbers per element), or returns an empty string for a
// type that holds no numbers (strings, opaque bytes, references), which the writers copy from input 1 unread.
std::string unread_numbers(hid_t file_type);
// Returns a memory type for `dtype` in native byte order, owned by the caller.
Handle memory_type(DType dtype, hid_t file_type);

// A flat range of a row-major array as a union of at most 2 * rank hyperslab boxes.
struct Box {
  std::vector<hsize_t> start, count;
};
std::vector<Box> flat_range_boxes(const Shape& shape, std::uint64_t offset, std::uint64_t count);

// Reads or writes a flat element range of a dataset through HDF5 (the general path: chunked, filtered, converted).
void read_range(hid_t dataset, hid_t mem_type, const Shape& shape, std::uint64_t offset, std::uint64_t count, void* dst,
                const std::string& file, const std::string& name);
void write_range(hid_t dataset, hid_t mem_type, const Shape& shape, std::uint64_t offset, std::uint64_t count,
                 const void* src, const std::string& file, const std::string& name);

// Renders an attribute as text when it is a string or a numeric scalar; nullopt for other types. Throws
// Error(runtime) naming `file` when HDF5 cannot read it.
std::optional<std::string> attribute_text(hid_t object, const char* name, const std::string& file);

}  // namespace wavg::h5
