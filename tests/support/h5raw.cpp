#include "support/h5raw.hpp"

#include <hdf5.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace wavg::test {

namespace {
void ok(herr_t st, const std::string& what) {
  if (st < 0) throw std::runtime_error("h5raw: " + what);
}
hid_t ok_id(hid_t id, const std::string& what) {
  if (id < 0) throw std::runtime_error("h5raw: " + what);
  return id;
}
}  // namespace

std::vector<double> read_doubles(const std::string& file, const std::string& dataset) {
  hid_t f = ok_id(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "open " + file);
  hid_t d = ok_id(H5Dopen2(f, dataset.c_str(), H5P_DEFAULT), "open " + dataset);
  hid_t s = H5Dget_space(d);
  std::vector<double> out(static_cast<std::size_t>(H5Sget_simple_extent_npoints(s)));
  ok(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), "read " + dataset);
  H5Sclose(s);
  H5Dclose(d);
  H5Fclose(f);
  return out;
}

std::vector<unsigned char> read_bytes(const std::string& file, const std::string& dataset) {
  hid_t f = ok_id(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "open " + file);
  hid_t d = ok_id(H5Dopen2(f, dataset.c_str(), H5P_DEFAULT), "open " + dataset);
  hid_t s = H5Dget_space(d);
  hid_t t = H5Dget_type(d);
  std::vector<unsigned char> out(static_cast<std::size_t>(H5Sget_simple_extent_npoints(s)) * H5Tget_size(t));
  ok(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), "read " + dataset);
  H5Tclose(t);
  H5Sclose(s);
  H5Dclose(d);
  H5Fclose(f);
  return out;
}

std::vector<std::string> list_datasets(const std::string& file) {
  std::vector<std::string> names;
  hid_t f = ok_id(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "open " + file);
  H5Ovisit(
      f, H5_INDEX_NAME, H5_ITER_INC,
      [](hid_t, const char* name, const H5O_info_t* info, void* data) -> herr_t {
        if (info->type == H5O_TYPE_DATASET) static_cast<std::vector<std::string>*>(data)->emplace_back(name);
        return 0;
      },
      &names);
  H5Fclose(f);
  return names;
}

void write_floats(const std::string& file, const std::string& dataset, const std::vector<std::uint64_t>& shape,
                  const std::vector<float>& values, bool create) {
  hid_t f = create ? H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)
                   : H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ok_id(f, "create " + file);
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  hid_t s = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t d = ok_id(H5Dcreate2(f, dataset.c_str(), H5T_IEEE_F32LE, s, lcpl, H5P_DEFAULT, H5P_DEFAULT), "create ds");
  ok(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), "write ds");
  H5Dclose(d);
  H5Pclose(lcpl);
  H5Sclose(s);
  H5Fclose(f);
}

std::string shared_dir() {
  std::error_code ec;
  // $WAVG_SHARED_DIR names it where ../shared is not beside the checkout (a git worktree elsewhere).
  const char* env = std::getenv("WAVG_SHARED_DIR");
  const std::string dir = env && *env ? env : WAVG_SHARED_DIR;
  return std::filesystem::is_directory(dir + "/real-checkpoints", ec) ? dir : "";
}

}  // namespace wavg::test
