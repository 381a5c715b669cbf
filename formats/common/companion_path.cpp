// Companion files of a model (companion_path.hpp).

#include "common/companion_path.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "wavg/error.hpp"

namespace wavg {

std::string relative_path_problem(const std::string& p) {
  if (p.empty()) return "is empty";
  if (p.find('\0') != std::string::npos) return "holds a NUL character";
  if (p.front() == '/') return "is absolute";
  for (std::size_t begin = 0; begin <= p.size();) {
    const std::size_t end = std::min(p.find('/', begin), p.size());
    if (end - begin == 2 && p.compare(begin, 2, "..") == 0) return "has a '..' component";
    begin = end + 1;
  }
  return {};
}

MappedFile map_companion(const std::string& model, const std::string& dir, const std::string& rel,
                         const std::string& what) {
  if (const std::string bad = relative_path_problem(rel); !bad.empty())
    fail(model, what + ": its path " + bad + " (it must lie in the model's folder)");
  std::error_code ec;
  const std::string model_dir = std::filesystem::canonical(dir.empty() ? "." : dir, ec).string();
  if (ec) fail(model, "cannot resolve the model's folder: " + ec.message());
  std::string why;
  const int fd = try_open_regular_file(dir + rel, FollowLinks::no, why);
  if (fd < 0) fail(model, what + ": " + why);
  const std::string real = resolved_path_of(fd);
  if (real.size() <= model_dir.size() + 1 || real.compare(0, model_dir.size(), model_dir) != 0 ||
      (model_dir != "/" && real[model_dir.size()] != '/')) {
    ::close(fd);
    fail(model, what + " resolves to " + real + ", outside the model's folder " + model_dir +
                    " (through a symbolic link)");
  }
  std::optional<MappedFile> file;
  try {
    file.emplace(dir + rel, fd);
  } catch (const Error& e) {
    ::close(fd);
    fail(model, what + ": " + e.problems().front().what);
  }
  ::close(fd);  // the mapping keeps the file
  return std::move(*file);
}

}  // namespace wavg
