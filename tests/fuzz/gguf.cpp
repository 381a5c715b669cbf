// Fuzzes the GGUF reader (formats/gguf/): its key/value pairs, tensor infos and every block type's decoding.
// The input is opened as wavg opens one and every tensor is read (fuzz_input.hpp).

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string dir = wavg::fuzz::write_files(data, size, "model.gguf");
  wavg::fuzz::read_everything(dir + "/model.gguf", {wavg::FormatId::gguf});
  return 0;
}
