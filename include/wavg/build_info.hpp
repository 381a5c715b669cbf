#pragma once
// What this wavg was built with, for `wavg --version`: the optional engines (CUDA and its GPU architectures, MPI,
// OpenMP), the SIMD levels the compiler was allowed to use, and the versions of the libraries that read and write
// files. A bug report that includes it says which code paths the reporter's binary has.

#include <string>
#include <utility>
#include <vector>

namespace wavg {

// Returns (name, value) pairs: "cuda" -> "yes (architectures 80-real 90)" or "no", "mpi", "openmp", "simd".
std::vector<std::pair<std::string, std::string>> build_features();

// Returns (library, version) pairs for the libraries the codecs use (HDF5, libzip, OpenSSL, ...), as loaded at run
// time where the library can say so.
std::vector<std::pair<std::string, std::string>> format_libraries();

}  // namespace wavg
