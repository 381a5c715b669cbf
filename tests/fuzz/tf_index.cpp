// Fuzzes the TensorFlow checkpoint reader (formats/tensorflow/): ckpt.index and its data shards beside it.
// The input is opened as wavg opens one and every tensor is read (fuzz_input.hpp).

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string dir = wavg::fuzz::write_files(data, size, "ckpt.index");
  wavg::fuzz::read_everything(dir + "/ckpt.index", {wavg::FormatId::tensorflow});
  return 0;
}
