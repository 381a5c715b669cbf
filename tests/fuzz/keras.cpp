// Fuzzes the Keras readers: a .keras archive (formats/keras/) and a Keras HDF5 file's layout
// (formats/hdf5/keras_layout.*), whichever the input's content is.
// The input is opened as wavg opens one and every tensor is read (fuzz_input.hpp).

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string dir = wavg::fuzz::write_files(data, size, "model.keras");
  wavg::fuzz::read_everything(dir + "/model.keras", {wavg::FormatId::keras, wavg::FormatId::hdf5});
  return 0;
}
