#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "support/temp_dir.hpp"
#include "wavg/error.hpp"
#include "wavg/mapped_file.hpp"

namespace {

std::string error_of(const std::string& path, wavg::FollowLinks follow = wavg::FollowLinks::yes) {
  try {
    wavg::MappedFile m(path, follow);
  } catch (const wavg::Error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.code() == wavg::ExitCode::runtime);
    return e.problems()[0].file + ": " + e.problems()[0].what;
  }
  return "no error";
}

}  // namespace

TEST_CASE("MappedFile maps a regular file's bytes and knows its extent") {
  wavg::test::TempDir dir;
  const std::string path = dir.path() + "/f.bin";
  std::ofstream(path, std::ios::binary) << "abcdef";
  const wavg::MappedFile m(path);
  REQUIRE(m.size() == 6);
  CHECK(std::string(reinterpret_cast<const char*>(m.data()), 6) == "abcdef");
  CHECK(m.contains(0, 6));
  CHECK(m.contains(6, 0));
  CHECK_FALSE(m.contains(1, 6));
  CHECK_FALSE(m.contains(2, ~0ull));  // would overflow offset + length
}

TEST_CASE("a mapping found by find_mapping stays readable after its MappedFile is gone") {
  wavg::test::TempDir dir;
  const std::string path = dir.path() + "/f.bin", other = dir.path() + "/g.bin";
  std::ofstream(path, std::ios::binary) << "abcdef";
  std::ofstream(other, std::ios::binary) << "abcdef";
  std::shared_ptr<const wavg::MappedRegion> held;
  {
    const wavg::MappedFile m(path);
    held = wavg::find_mapping(path);
    REQUIRE(held);
    CHECK(held->data == m.data());
    CHECK(held->size == 6);
    CHECK_FALSE(wavg::find_mapping(other));  // same bytes, another file
  }
  CHECK(std::string(reinterpret_cast<const char*>(held->data), 6) == "abcdef");  // unmapped by its last holder
  held.reset();
  CHECK_FALSE(wavg::find_mapping(path));
}

TEST_CASE("MappedFile maps an empty file to nothing") {
  wavg::test::TempDir dir;
  const std::string path = dir.path() + "/empty";
  std::ofstream(path, std::ios::binary).flush();
  const wavg::MappedFile m(path);
  CHECK(m.size() == 0);
  CHECK(m.data() == nullptr);
}

TEST_CASE("MappedFile refuses a FIFO at once instead of blocking in open()") {
  wavg::test::TempDir dir;
  const std::string path = dir.path() + "/fifo";
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  CHECK(error_of(path) == path + ": is a FIFO, not a regular file");
}

TEST_CASE("MappedFile refuses a directory and a device") {
  wavg::test::TempDir dir;
  CHECK(error_of(dir.path()) == dir.path() + ": is a directory");
  CHECK(error_of("/dev/null") == "/dev/null: is a device, not a regular file");
}

TEST_CASE("MappedFile refuses a symbolic link when links are not followed") {
  wavg::test::TempDir dir;
  const std::string target = dir.path() + "/target";
  const std::string link = dir.path() + "/link";
  std::ofstream(target, std::ios::binary) << "x";
  std::filesystem::create_symlink(target, link);
  CHECK(wavg::MappedFile(link).size() == 1);
  CHECK(error_of(link, wavg::FollowLinks::no) == link + ": is a symbolic link (refused)");
}

TEST_CASE("MappedFile names a missing file with the system's reason") {
  CHECK(error_of("/nonexistent/wavg-test") == "/nonexistent/wavg-test: No such file or directory");
}

TEST_CASE("releasing a mapping in many small ranges, in order, keeps only the last few MiB resident") {
  // 16 MiB read through the mapping in 8-byte ranges, each released after it is read (as the engine does with
  // 100,000 tiny tensors): the pages behind stay dropped, as the mapping's Rss in /proc/self/smaps counts them.
  wavg::test::TempDir dir;
  const std::string path = dir.path() + "/f.bin";
  constexpr std::size_t size = 16u << 20;
  std::ofstream(path, std::ios::binary) << std::string(size, 'x');
  const wavg::MappedFile m(path);
  unsigned sum = 0;
  for (std::size_t at = 0; at < size; at += 8) {
    sum += m.data()[at];
    m.release(at, at + 8);
  }
  CHECK(sum == 'x' * (size / 8));
  std::ifstream smaps("/proc/self/smaps");
  std::ostringstream start;
  start << std::hex << reinterpret_cast<std::uintptr_t>(m.data()) << "-";
  std::string line;
  long rss_kb = -1;
  for (bool in = false; std::getline(smaps, line);) {
    if (line.rfind(start.str(), 0) == 0) in = true;
    if (in && line.rfind("Rss:", 0) == 0) {
      rss_kb = std::stol(line.substr(4));
      break;
    }
  }
  REQUIRE(rss_kb >= 0);
  CHECK(rss_kb <= 6 * 1024);  // the window being read and the fault-around beside it, not the 16 MiB
}
