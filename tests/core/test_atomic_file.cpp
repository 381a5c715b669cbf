// The output file appears whole or not at all: on exceptions and on SIGINT the temporary file is gone.

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>

#include "support/h5raw.hpp"
#include "support/run.hpp"
#include "wavg/atomic_file.hpp"
#include "wavg/error.hpp"

using namespace wavg;
namespace fs = std::filesystem;

TEST_CASE("commit renames the temporary file onto the target") {
  test::TempDir dir;
  {
    AtomicFile out(dir / "x.h5", Overwrite::no);
    CHECK(fs::path(out.tmp_path()).parent_path() == fs::path(dir.path()));
    std::ofstream(out.tmp_path()) << "payload";
    out.commit();
  }
  CHECK(fs::exists(dir / "x.h5"));
  CHECK(test::count_entries(dir.path()) == 1);
}

TEST_CASE("an uncommitted file leaves nothing behind") {
  test::TempDir dir;
  try {
    AtomicFile out(dir / "x.h5", Overwrite::no);
    std::ofstream(out.tmp_path()) << "partial";
    throw std::runtime_error("merge failed half way");
  } catch (const std::runtime_error&) {
  }
  CHECK(test::count_entries(dir.path()) == 0);
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
  CHECK(test::count_entries(dir.path()) == 0);
}

TEST_CASE("exit() and std::terminate (a library's fatal error, an exception out of a thread) remove the output") {
  for (const bool terminate : {false, true}) {
    test::TempDir dir;
    const auto r = test::run_in_child([&] {
      AtomicFile out(dir / "x.h5", Overwrite::no);
      std::ofstream(out.tmp_path()) << "partial";
      std::signal(SIGABRT, SIG_DFL);  // the test runner's crash report is not this child's to give
      if (terminate) std::terminate();
      std::exit(1);  // as libgomp's gomp_fatal does when it cannot make its threads
    });
    CHECK(r.exit_code == (terminate ? 128 + SIGABRT : 1));
    CHECK(test::count_entries(dir.path()) == 0);
  }
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

TEST_CASE("--force replaces a regular file only: a FIFO or a device target is refused") {
  test::TempDir dir;
  REQUIRE(::mkfifo((dir / "pipe.h5").c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(AtomicFile(dir / "pipe.h5", Overwrite::yes),
                       (dir / "pipe.h5" + ": is not a regular file (--force replaces only regular files)").c_str(),
                       Error);
  CHECK_THROWS_AS(AtomicFile("/dev/null", Overwrite::yes), Error);
  CHECK(test::count_entries(dir.path()) == 1);
}

TEST_CASE("an output or a companion that is one of the inputs' files is refused") {
  test::TempDir dir;
  std::ofstream(dir / "model.json") << "{}";
  std::ofstream(dir / "shard.bin") << "weights";
  const std::vector<std::string> inputs{dir / "model.json", dir / "shard.bin"};
  CHECK_THROWS_AS(AtomicFile(dir / "shard.bin", Overwrite::yes, inputs), Error);
  AtomicFile out(dir / "out.json", Overwrite::no, inputs);
  CHECK_THROWS_AS(add_companion(out.tmp_path(), dir.path() + "/./shard.bin"), Error);
  CHECK(test::read_all(dir / "shard.bin") == "weights");
}

TEST_CASE("companions are placed as new files with the main file, and retired files go after the commit") {
  test::TempDir dir;
  std::ofstream(dir / "out.json") << "old main";
  std::ofstream(dir / "old-shard.bin") << "old shard";
  std::ofstream(dir / "input.bin") << "input";
  {
    AtomicFile out(dir / "out.json", Overwrite::yes, {dir / "input.bin"});
    CHECK(run_token(out.tmp_path()).size() == 6);
    CHECK(out.tmp_path().substr(out.tmp_path().size() - 6) == run_token(out.tmp_path()));
    std::ofstream(add_companion(out.tmp_path(), dir / "new-shard.bin")) << "new shard";
    CHECK_THROWS_AS(add_companion(out.tmp_path(), dir / "old-shard.bin"), Error);  // never over a file
    retire_after_commit(out.tmp_path(), dir / "old-shard.bin");
    retire_after_commit(out.tmp_path(), dir / "input.bin");      // an input is never removed
    retire_after_commit(out.tmp_path(), dir / "new-shard.bin");  // nor a file of the new output
    std::ofstream(out.tmp_path()) << "new main";
    CHECK(test::read_all(dir / "old-shard.bin") == "old shard");
    out.commit();
  }
  CHECK(test::read_all(dir / "out.json") == "new main");
  CHECK(test::read_all(dir / "new-shard.bin") == "new shard");
  CHECK(test::read_all(dir / "input.bin") == "input");
  CHECK_FALSE(fs::exists(dir / "old-shard.bin"));
  CHECK(test::count_entries(dir.path()) == 3);
}
