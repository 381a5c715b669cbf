// The output file appears whole or not at all: on exceptions and on SIGINT the temporary file is gone.

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "support/h5raw.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/error.hpp"

using namespace wavg;
namespace fs = std::filesystem;

namespace {
std::size_t entries(const std::string& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}
}  // namespace

TEST_CASE("commit renames the temporary file onto the target") {
  test::TempDir dir;
  {
    AtomicFile out(dir / "x.h5", Overwrite::no);
    CHECK(fs::path(out.tmp_path()).parent_path() == fs::path(dir.path()));
    std::ofstream(out.tmp_path()) << "payload";
    out.commit();
  }
  CHECK(fs::exists(dir / "x.h5"));
  CHECK(entries(dir.path()) == 1);
}

TEST_CASE("an uncommitted file leaves nothing behind") {
  test::TempDir dir;
  try {
    AtomicFile out(dir / "x.h5", Overwrite::no);
    std::ofstream(out.tmp_path()) << "partial";
    throw std::runtime_error("merge failed half way");
  } catch (const std::runtime_error&) {
  }
  CHECK(entries(dir.path()) == 0);
}

TEST_CASE("an existing target is refused without Overwrite::yes, and replaced with it") {
  test::TempDir dir;
  std::ofstream(dir / "x.h5") << "old";
  CHECK_THROWS_AS(AtomicFile(dir / "x.h5", Overwrite::no), Error);
  {
    AtomicFile out(dir / "x.h5", Overwrite::yes);
    std::ofstream(out.tmp_path()) << "new";
    out.commit();
  }
  std::ifstream in(dir / "x.h5");
  std::string s;
  in >> s;
  CHECK(s == "new");
}

TEST_CASE("of two runs racing for a new output, the one that commits second gets a usage error (exit 2)") {
  test::TempDir dir;
  AtomicFile out(dir / "x.h5", Overwrite::no);
  std::ofstream(out.tmp_path()) << "mine";
  std::ofstream(dir / "x.h5") << "the other run's";  // it committed first, while this one worked
  try {
    out.commit();
    FAIL("commit replaced the other run's output");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
    CHECK(std::string(e.what()).find("already exists") != std::string::npos);
  }
  CHECK(test::read_all(dir / "x.h5") == "the other run's");
}

TEST_CASE("SIGINT removes the temporary file and the process dies of the signal") {
  test::TempDir dir;
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    AtomicFile out(dir / "x.h5", Overwrite::no);
    std::ofstream(out.tmp_path()) << "partial";
    std::raise(SIGINT);
    _exit(0);  // not reached
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGINT);
  CHECK(entries(dir.path()) == 0);
}

TEST_CASE("an output that is one of the inputs is refused, also through another path") {
  test::TempDir dir;
  std::ofstream(dir / "a.h5") << "x";
  CHECK_THROWS_AS(check_output_not_input(dir / "a.h5", {dir / "b.h5", dir / "a.h5"}), Error);
  CHECK_THROWS_AS(check_output_not_input(dir.path() + "/./a.h5", {dir / "a.h5"}), Error);
  fs::create_hard_link(dir / "a.h5", dir / "link.h5");
  CHECK_THROWS_AS(check_output_not_input(dir / "link.h5", {dir / "a.h5"}), Error);
  CHECK_NOTHROW(check_output_not_input(dir / "c.h5", {dir / "a.h5"}));
}
