// What an output may remove (removal.hpp).

#include "wavg/removal.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "wavg/error.hpp"

namespace wavg {

namespace {

std::string in_folder(const std::string& folder, const std::string& name) {
  return folder.empty() ? name : (std::filesystem::path(folder) / name).string();
}

bool is_plain_file(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::vector<std::string> removable_files(const OwnFiles& own, const std::vector<std::string>& candidates,
                                         Overwrite overwrite) {
  std::vector<std::string> out;
  for (const std::string& name : candidates) {
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
        name.find('\0') != std::string::npos || !own.named_like(name) || own.used_by_others.count(name) ||
        std::find(out.begin(), out.end(), name) != out.end() || !is_plain_file(in_folder(own.folder, name)))
      continue;
    if (overwrite == Overwrite::no)
      throw Error(ExitCode::usage, in_folder(own.folder, name),
                  "is a " + std::string(own.kind) +
                      " named like the output's that no model beside it uses; writing the output would remove it "
                      "(use --force to remove it, or move it away)");
    out.push_back(name);
  }
  return out;
}

std::vector<std::string> files_named_like(const OwnFiles& own) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(own.folder.empty() ? "." : own.folder, ec)) {
    const std::string name = e.path().filename().string();
    if (own.named_like(name)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());  // directory order differs between file systems; messages should not
  return out;
}

}  // namespace wavg
