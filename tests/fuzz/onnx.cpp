// Fuzzes the ONNX reader (formats/onnx/): a model.onnx and the external data files it names.
// The input is opened as wavg opens one and every tensor is read (fuzz_input.hpp).

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string dir = wavg::fuzz::write_files(data, size, "model.onnx");
  wavg::fuzz::read_everything(dir + "/model.onnx", {wavg::FormatId::onnx});
  return 0;
}
