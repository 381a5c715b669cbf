// Fuzzes the PyTorch DCP reader (formats/dcp/): a folder's .metadata pickle and the .distcp files it names.
// The input is opened as wavg opens one and every tensor is read (fuzz_input.hpp).

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string dir = wavg::fuzz::write_files(data, size, ".metadata");
  wavg::fuzz::read_everything(dir, {wavg::FormatId::dcp});
  return 0;
}
