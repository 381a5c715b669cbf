#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "wavg/format.hpp"

int main(int argc, char** argv) {
  // The HDF5 structure probe spawns this executable as its helper process (structure_probe.hpp).
  if (const int helper = wavg::run_codec_helper(argc, argv); helper >= 0) return helper;
  doctest::Context context(argc, argv);
  return context.run();
}
