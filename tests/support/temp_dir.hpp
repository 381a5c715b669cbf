#pragma once
// A fresh temporary directory per test, removed with everything in it when the test ends.

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <string>

namespace wavg::test {

class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    m_path = std::filesystem::temp_directory_path() /
             ("wavg-test-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
    std::filesystem::create_directories(m_path);
    m_text = m_path.string();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return m_text; }
  std::string file(const std::string& name) const { return (m_path / name).string(); }
  std::string operator/(const std::string& name) const { return file(name); }
  // Writes `bytes` to a new file `name` and returns its path.
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(file(name), std::ios::binary) << bytes;
    return file(name);
  }

 private:
  std::filesystem::path m_path;
  std::string m_text;
};

// Counts the entries of a directory (a test that nothing was left behind).
inline std::size_t count_entries(const std::string& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace wavg::test
