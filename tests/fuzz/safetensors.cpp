// Fuzzes the safetensors reader (formats/safetensors/).
// The input is opened as wavg opens one and every tensor is read (fuzz_input.hpp).

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string dir = wavg::fuzz::write_files(data, size, "model.safetensors");
  wavg::fuzz::read_everything(dir + "/model.safetensors", {wavg::FormatId::safetensors});
  return 0;
}
