// Fuzzes the PyTorch reader (formats/pytorch/): torch.save's zip archive and its legacy pickle.
// The input is opened as wavg opens one and every tensor is read (fuzz_input.hpp).

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string dir = wavg::fuzz::write_files(data, size, "model.pt");
  wavg::fuzz::read_everything(dir + "/model.pt", {wavg::FormatId::pytorch});
  return 0;
}
