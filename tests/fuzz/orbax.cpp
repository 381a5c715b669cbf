// Fuzzes the Orbax reader (formats/orbax/): a step folder's _METADATA, the OCDBT manifest and B+tree nodes decoded by
// hand, the zarr metadata (.zarray, zarr.json) and chunks (zstd, gzip, blosc, shards' indexes) they name.
// The input is opened as wavg opens one and every tensor is read (fuzz_input.hpp).

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string dir = wavg::fuzz::write_files(data, size, "_METADATA");
  wavg::fuzz::read_everything(dir, {wavg::FormatId::orbax});
  return 0;
}
