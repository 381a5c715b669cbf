#include "support/h5corpus.hpp"

#include <stdexcept>

namespace wavg::test {

H5Id h5_ok(hid_t id, herr_t (*closer)(hid_t), const std::string& what) {
  if (id < 0) throw std::runtime_error("h5corpus: " + what);
  return H5Id(id, closer);
}

void h5_ok(herr_t status, const std::string& what) {
  if (status < 0) throw std::runtime_error("h5corpus: " + what);
}

H5Id plist(hid_t cls) { return h5_ok(H5Pcreate(cls), H5Pclose, "create a property list"); }

H5Id space_of(const std::vector<hsize_t>& dims) {
  if (dims.empty()) return h5_ok(H5Screate(H5S_SCALAR), H5Sclose, "create a scalar dataspace");
  return h5_ok(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose, "create a dataspace");
}

H5Id half_type(bool bf16) {
  H5Id t = h5_ok(H5Tcopy(H5T_IEEE_F32LE), H5Tclose, "copy a float type");
  const std::size_t mbits = bf16 ? 7 : 10, ebits = bf16 ? 8 : 5;
  h5_ok(H5Tset_fields(t, 15, mbits, ebits, 0, mbits), "set half fields");
  h5_ok(H5Tset_size(t, 2), "set half size");
  h5_ok(H5Tset_ebias(t, bf16 ? 127 : 15), "set half bias");
  return t;
}

H5Id string_type(Strings kind, std::size_t fixed_size) {
  H5Id t = h5_ok(H5Tcopy(H5T_C_S1), H5Tclose, "copy a string type");
  if (kind == Strings::variable) {
    h5_ok(H5Tset_size(t, H5T_VARIABLE), "set vlen");
    h5_ok(H5Tset_cset(t, H5T_CSET_UTF8), "set utf-8");
  } else {
    h5_ok(H5Tset_size(t, fixed_size > 0 ? fixed_size : 1), "set string size");
    h5_ok(H5Tset_strpad(t, H5T_STR_NULLPAD), "set padding");
  }
  return t;
}

void string_attr(hid_t object, const std::string& name, const std::vector<std::string>& values, Strings kind,
                 bool scalar) {
  std::size_t longest = 0;
  for (const std::string& v : values) longest = std::max(longest, v.size());
  H5Id type = string_type(kind, longest);
  H5Id space = space_of(scalar ? std::vector<hsize_t>{} : std::vector<hsize_t>{values.size()});
  H5Id attr = h5_ok(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                    "create attribute " + name);
  if (kind == Strings::variable) {
    std::vector<const char*> ptrs;
    for (const std::string& v : values) ptrs.push_back(v.c_str());
    h5_ok(H5Awrite(attr, type, ptrs.data()), "write attribute " + name);
  } else {
    std::string packed(values.size() * std::max<std::size_t>(longest, 1), '\0');
    for (std::size_t i = 0; i < values.size(); ++i) packed.replace(i * longest, values[i].size(), values[i]);
    h5_ok(H5Awrite(attr, type, packed.data()), "write attribute " + name);
  }
}

void double_attr(hid_t object, const std::string& name, const std::vector<hsize_t>& dims,
                 const std::vector<double>& values) {
  H5Id space = space_of(dims);
  H5Id attr = h5_ok(H5Acreate2(object, name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                    "create attribute " + name);
  const double none = 0;  // HDF5 wants a buffer even for no elements (Keras's empty weight_names)
  h5_ok(H5Awrite(attr, H5T_NATIVE_DOUBLE, values.empty() ? &none : values.data()), "write attribute " + name);
}

H5Writer::H5Writer(std::string path, hid_t fcpl, hid_t fapl) : m_path(std::move(path)) {
  m_file = H5Fcreate(m_path.c_str(), H5F_ACC_TRUNC, fcpl, fapl);
  if (m_file < 0) throw std::runtime_error("h5corpus: cannot create " + m_path);
}

H5Writer::~H5Writer() {
  if (m_file >= 0) H5Fclose(m_file);
}

const Written& H5Writer::close() {
  if (m_file >= 0) h5_ok(H5Fclose(m_file), "close " + m_path);
  m_file = H5I_INVALID_HID;
  return m_written;
}

void H5Writer::raw(const std::string& name, hid_t file_type, const std::vector<hsize_t>& dims, const Bytes& bytes,
                   hid_t dcpl) {
  write(name, file_type, file_type, dims, bytes, dcpl);
  m_written[name] = bytes;
}

void H5Writer::write(const std::string& name, hid_t file_type, hid_t mem_type, const std::vector<hsize_t>& dims,
                     const Bytes& bytes, hid_t dcpl) {
  H5Id space = space_of(dims);
  H5Id lcpl = plist(H5P_LINK_CREATE);
  h5_ok(H5Pset_create_intermediate_group(lcpl, 1), "set intermediate groups");
  H5Id ds = h5_ok(H5Dcreate2(m_file, name.c_str(), file_type, space, lcpl, dcpl, H5P_DEFAULT), H5Dclose,
                  "create dataset " + name);
  if (!bytes.empty()) h5_ok(H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()), "write " + name);
}

void H5Writer::create(const std::string& name, hid_t file_type, hid_t space, hid_t dcpl) {
  H5Id lcpl = plist(H5P_LINK_CREATE);
  h5_ok(H5Pset_create_intermediate_group(lcpl, 1), "set intermediate groups");
  h5_ok(H5Dcreate2(m_file, name.c_str(), file_type, space, lcpl, dcpl, H5P_DEFAULT), H5Dclose,
        "create dataset " + name);
}

void H5Writer::group(const std::string& name, hid_t gcpl) {
  H5Id lcpl = plist(H5P_LINK_CREATE);
  h5_ok(H5Pset_create_intermediate_group(lcpl, 1), "set intermediate groups");
  h5_ok(H5Gcreate2(m_file, name.c_str(), lcpl, gcpl, H5P_DEFAULT), H5Gclose, "create group " + name);
}

std::vector<float> floats(std::size_t n, int seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = (static_cast<float>(seed) * 64.0f + static_cast<float>(i)) * (i % 2 ? -0.25f : 0.5f) + 0.125f;
  return v;
}

}  // namespace wavg::test
