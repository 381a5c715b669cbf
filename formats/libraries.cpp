// The libraries behind the codecs, with their versions, for `wavg --version`. Run-time versions where the library
// reports one (the shared object actually loaded can differ from the headers built against).

#include <hdf5.h>
#include <openssl/crypto.h>
#include <zip.h>
#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include "wavg/build_info.hpp"

namespace wavg {

std::vector<std::pair<std::string, std::string>> format_libraries() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  std::string openssl = OpenSSL_version(OPENSSL_VERSION);
  if (openssl.rfind("OpenSSL ", 0) == 0) openssl.erase(0, 8);
  if (const auto space = openssl.find(' '); space != std::string::npos) openssl.resize(space);
  return {
      {"HDF5", std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release)},
      {"libzip", zip_libzip_version()},
      {"OpenSSL", openssl},
      {"nlohmann_json", std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." +
                            std::to_string(NLOHMANN_JSON_VERSION_MINOR) + "." +
                            std::to_string(NLOHMANN_JSON_VERSION_PATCH)},
      {"Eigen", std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
                    std::to_string(EIGEN_MINOR_VERSION)},
  };
}

}  // namespace wavg
