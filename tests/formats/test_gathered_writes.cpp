// Gathered writes (formats/common/gathered_writes.hpp): whatever the order of the writes, the file holds what
// writing each at once would have left, checked against a buffer filled here byte by byte.

#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <iterator>
#include <string>

#include "common/gathered_writes.hpp"
#include "support/temp_dir.hpp"

using namespace wavg;
using namespace wavg::test;

namespace {

std::string read_back(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("gathered writes leave the bytes of each write at its offset, in any order, small and large") {
  TempDir dir;
  const std::string path = dir / "out";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  const std::string display = "out";
  std::string expected(3 << 20, '\0');
  {
    GatheredWrites w(fd, display);
    const auto put = [&](std::uint64_t at, std::size_t n, char first) {
      std::string bytes(n, '\0');
      for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>(first + static_cast<char>(i % 7));
      expected.replace(at, n, bytes);
      w.write(bytes.data(), n, at);
    };
    // 8-byte pieces in a scrambled order (i * 7919 mod 4096 visits every slot once), more than one flush's worth
    for (std::uint64_t i = 0; i < 4096; ++i) put(((i * 7919) % 4096) * 8, 8, static_cast<char>('a' + i % 20));
    put(1 << 20, 200 << 10, 'L');  // large: goes out at once
    // every offset written four times: pieces waiting together overlap, and the later must win
    for (std::uint64_t i = 0; i < 200000; ++i) put((2 << 20) + (i % 50000) * 16, 16, static_cast<char>(i % 90));
    put(5, 10, 'X');  // over pieces written out before
    w.flush();
  }
  ::close(fd);
  const std::string got = read_back(path);
  REQUIRE(got.size() >= (2 << 20) + 50000 * 16);
  expected.resize(got.size());
  CHECK(got == expected);
}
