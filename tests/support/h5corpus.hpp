#pragma once
// Writes small HDF5 files through the plain HDF5 C API for the tests of wavg's HDF5 reader, and records what each
// numeric dataset holds as the bytes a reader should hand out (native byte order), independently of wavg.

#include <hdf5.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace wavg::test {

using Bytes = std::vector<unsigned char>;
// Each tensor a file should yield, by name, with its bytes as read() hands them out, or nullopt for one whose
// values are only compared between two readers.
using Written = std::map<std::string, std::optional<Bytes>>;

// An owned HDF5 identifier.
class H5Id {
 public:
  H5Id(hid_t id, herr_t (*closer)(hid_t)) : m_id(id), m_closer(closer) {}
  H5Id(H5Id&& o) noexcept : m_id(o.m_id), m_closer(o.m_closer) { o.m_id = H5I_INVALID_HID; }
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;
  H5Id& operator=(H5Id&&) = delete;
  ~H5Id() {
    if (m_id >= 0) m_closer(m_id);
  }
  operator hid_t() const { return m_id; }

 private:
  hid_t m_id;
  herr_t (*m_closer)(hid_t);
};

// Throws std::runtime_error naming `what` when an HDF5 call failed; otherwise returns its result owned.
H5Id h5_ok(hid_t id, herr_t (*closer)(hid_t), const std::string& what);
void h5_ok(herr_t status, const std::string& what);

// A property list of class `cls` (H5P_FILE_CREATE, H5P_DATASET_CREATE, ...).
H5Id plist(hid_t cls);
// A dataspace of shape `dims`: simple, or scalar when `dims` is empty.
H5Id space_of(const std::vector<hsize_t>& dims);
// IEEE half precision (bf16: bfloat16) as wavg's writer builds it (formats/hdf5/h5.cpp), little-endian.
H5Id half_type(bool bf16);
// A fixed-length (NUL-padded, as numpy's S dtype) or variable-length UTF-8 string type.
enum class Strings { fixed, variable };
H5Id string_type(Strings kind, std::size_t fixed_size);

// Sets attribute `name` of `object` to a list of strings (a scalar when `scalar` and there is one string).
void string_attr(hid_t object, const std::string& name, const std::vector<std::string>& values, Strings kind,
                 bool scalar = false);
// Sets attribute `name` of `object` to a double array (a scalar when `dims` is empty).
void double_attr(hid_t object, const std::string& name, const std::vector<hsize_t>& dims,
                 const std::vector<double>& values);

template <class T>
hid_t native_type_of() {
  if constexpr (std::is_same_v<T, float>) return H5T_NATIVE_FLOAT;
  if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
  if constexpr (std::is_same_v<T, std::int8_t>) return H5T_NATIVE_INT8;
  if constexpr (std::is_same_v<T, std::int16_t>) return H5T_NATIVE_INT16;
  if constexpr (std::is_same_v<T, std::int32_t>) return H5T_NATIVE_INT32;
  if constexpr (std::is_same_v<T, std::int64_t>) return H5T_NATIVE_INT64;
  if constexpr (std::is_same_v<T, std::uint8_t>) return H5T_NATIVE_UINT8;
  if constexpr (std::is_same_v<T, std::uint16_t>) return H5T_NATIVE_UINT16;
  if constexpr (std::is_same_v<T, std::uint32_t>) return H5T_NATIVE_UINT32;
  if constexpr (std::is_same_v<T, std::uint64_t>) return H5T_NATIVE_UINT64;
}

// One HDF5 file being written, and the tensors a reader should find in it.
class H5Writer {
 public:
  // Creates (truncates) `path` with creation properties `fcpl` and access properties `fapl`.
  explicit H5Writer(std::string path, hid_t fcpl = H5P_DEFAULT, hid_t fapl = H5P_DEFAULT);
  ~H5Writer();
  H5Writer(const H5Writer&) = delete;
  H5Writer& operator=(const H5Writer&) = delete;

  hid_t file() const { return m_file; }
  const std::string& path() const { return m_path; }
  // Closes the file, which a reader can then open; returns the tensors it should find.
  const Written& close();

  // Creates dataset `name` (and the groups on its path) of `file_type` and shape `dims` ({} for a scalar), writes
  // `values` converted from their native type by HDF5, and records them as the tensor's bytes.
  template <class T>
  void numbers(const std::string& name, hid_t file_type, const std::vector<hsize_t>& dims, const std::vector<T>& values,
               hid_t dcpl = H5P_DEFAULT) {
    Bytes bytes(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    write(name, file_type, native_type_of<T>(), dims, bytes, dcpl);
    m_written[name] = std::move(bytes);
  }
  // Creates dataset `name` holding `bytes` in its file type (float16, bfloat16, bool), which are also what a
  // reader hands out.
  void raw(const std::string& name, hid_t file_type, const std::vector<hsize_t>& dims, const Bytes& bytes,
           hid_t dcpl = H5P_DEFAULT);
  // Creates dataset `name` and writes `bytes` of memory type `mem_type` into it, recording nothing.
  void write(const std::string& name, hid_t file_type, hid_t mem_type, const std::vector<hsize_t>& dims,
             const Bytes& bytes, hid_t dcpl = H5P_DEFAULT);
  // Creates dataset `name` with dataspace `space` and writes nothing.
  void create(const std::string& name, hid_t file_type, hid_t space, hid_t dcpl = H5P_DEFAULT);
  // Records a tensor the file holds that was not written through numbers() or raw().
  void expect(const std::string& name, std::optional<Bytes> bytes) { m_written[name] = std::move(bytes); }
  // Creates group `name` (and the groups on its path) with creation properties `gcpl`.
  void group(const std::string& name, hid_t gcpl = H5P_DEFAULT);

 private:
  std::string m_path;
  hid_t m_file = H5I_INVALID_HID;
  Written m_written;
};

// Returns `n` float32 values from `seed` on, each distinct and exact in every float type of 16 bits or more.
std::vector<float> floats(std::size_t n, int seed);

}  // namespace wavg::test
