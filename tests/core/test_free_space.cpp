// The output's size against its file system's free space: refused with both numbers before anything is written.

#include <doctest/doctest.h>
#include <sys/statvfs.h>

#include <filesystem>

#include "support/temp_dir.hpp"
#include "wavg/error.hpp"
#include "wavg/free_space.hpp"

using namespace wavg;

TEST_CASE("an output larger than the free space is refused naming it, with both numbers") {
  test::TempDir dir;
  struct statvfs vfs {};
  REQUIRE(::statvfs(dir.path().c_str(), &vfs) == 0);
  const std::uint64_t free = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  const std::uint64_t too_big = free + (1ull << 40);  // 1 TiB more than there is, whatever the disk
  try {
    check_free_space(dir / "out.h5", too_big);
    FAIL("not refused");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::runtime);
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].file == dir / "out.h5");
    const std::string& what = e.problems()[0].what;
    CHECK(what.find("needs at least " + std::to_string(too_big) + " bytes") != std::string::npos);
    CHECK(what.find(" bytes free") != std::string::npos);
  }
  CHECK(!std::filesystem::exists(dir / "out.h5"));
  CHECK_NOTHROW(check_free_space(dir / "out.h5", 4096));
  CHECK_NOTHROW(check_free_space("relative-name.h5", 1));  // the current directory's file system
}

TEST_CASE("the least output size is the sum of the tensors' bytes, saturating") {
  CHECK(least_output_bytes({{"a", DType::f32, {3, 4}}, {"b", DType::f16, {5}}}) == 48 + 10);
  CHECK(least_output_bytes({{"a", DType::f64, {1ull << 60}}, {"b", DType::f64, {1ull << 60}}}) == UINT64_MAX);
}

TEST_CASE("a folder output (out/, not yet made) is checked against the file system it goes to") {
  test::TempDir dir;
  struct statvfs vfs {};
  REQUIRE(::statvfs(dir.path().c_str(), &vfs) == 0);
  const std::uint64_t too_big = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize + (1ull << 40);
  CHECK_THROWS_AS(check_free_space(dir / "model/", too_big), Error);
  CHECK_THROWS_AS(check_free_space(dir / "model", too_big), Error);
  CHECK_NOTHROW(check_free_space(dir / "model/", 1));
}
