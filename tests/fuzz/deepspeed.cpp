// Fuzzes the DeepSpeed reader (formats/deepspeed/): a folder's `latest` and the global_stepN/ it names.
// The input is opened as wavg opens one and every tensor is read (fuzz_input.hpp).

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string dir = wavg::fuzz::write_files(data, size, "latest");
  wavg::fuzz::read_everything(dir, {wavg::FormatId::deepspeed});
  return 0;
}
