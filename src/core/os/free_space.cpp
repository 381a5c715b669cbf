#include "wavg/free_space.hpp"

#include <sys/statvfs.h>

#include <filesystem>

#include "wavg/error.hpp"

namespace wavg {

void check_free_space(const std::string& output, std::uint64_t bytes) {
  std::string path = output;
  while (path.size() > 1 && path.back() == '/') path.pop_back();  // a folder output "out/" goes beside "out"
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0) return;  // the output's creation will say what is wrong with the path
  const std::uint64_t unit = vfs.f_frsize ? vfs.f_frsize : vfs.f_bsize;
  // f_bavail x unit cannot overflow for any real file system, but a network one may report anything.
  const std::uint64_t free = unit && vfs.f_bavail > UINT64_MAX / unit ? UINT64_MAX : vfs.f_bavail * unit;
  if (bytes > free)
    fail(output, "the output needs at least " + std::to_string(bytes) + " bytes but its file system has " +
                     std::to_string(free) + " bytes free");
}

std::uint64_t least_output_bytes(const std::vector<TensorInfo>& tensors) {
  std::uint64_t sum = 0;
  for (const TensorInfo& t : tensors) sum = t.bytes() > UINT64_MAX - sum ? UINT64_MAX : sum + t.bytes();
  return sum;
}

}  // namespace wavg
