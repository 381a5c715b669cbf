// Fuzzes the Flax msgpack reader (formats/flax/).
// The input is opened as wavg opens one and every tensor is read (fuzz_input.hpp).

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string dir = wavg::fuzz::write_files(data, size, "model.msgpack");
  wavg::fuzz::read_everything(dir + "/model.msgpack", {wavg::FormatId::flax});
  return 0;
}
