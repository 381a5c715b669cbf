// A folder output appears whole or not at all: committed by one rename (or one exchange with the folder it
// replaces), removed with its contents on an exception or an interrupt.

#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "support/run.hpp"
#include "support/temp_dir.hpp"
#include "wavg/atomic_directory.hpp"
#include "wavg/error.hpp"

using namespace wavg;
namespace fs = std::filesystem;

namespace {

// Writes a small model folder, creating it when it does not exist: config.json and one shard.
void fill(const std::string& dir, const std::string& tag) {
  fs::create_directories(dir);
  std::ofstream(dir + "/config.json") << "{\"tag\": \"" << tag << "\"}";
  fs::create_directory(dir + "/sub");
  std::ofstream(dir + "/sub/model-00001-of-00001.safetensors") << tag;
}

// Writes the folder output `target` holding fill(tag) and commits it.
void commit_folder(const std::string& target, Overwrite overwrite, const std::string& tag) {
  AtomicDirectory out(target, overwrite);
  CHECK(fs::path(out.tmp_path()).parent_path() == fs::path(target).parent_path());
  fill(out.tmp_path(), tag);
  out.commit();
}

// Checks that `dir` holds the folder model and nothing else, and that model's file `name` reads `want`.
void check_only_model(const test::TempDir& dir, const std::string& name, const std::string& want) {
  CHECK(test::read_all(dir / ("model/" + name)) == want);
  CHECK(test::count_entries(dir.path()) == 1);
}

}  // namespace

TEST_CASE("a folder output is renamed into place whole on commit") {
  test::TempDir dir;
  commit_folder(dir / "model", Overwrite::no, "new");
  check_only_model(dir, "sub/model-00001-of-00001.safetensors", "new");
}

TEST_CASE("with --force the old folder is replaced and removed; without, it is refused") {
  test::TempDir dir;
  fill(dir / "model", "old");
  CHECK_THROWS_AS(AtomicDirectory(dir / "model", Overwrite::no), Error);
  commit_folder(dir / "model", Overwrite::yes, "new");
  check_only_model(dir, "config.json", "{\"tag\": \"new\"}");
}

TEST_CASE("a folder output that is not committed leaves nothing, and the old folder stays") {
  test::TempDir dir;
  fill(dir / "model", "old");
  try {
    AtomicDirectory out(dir / "model", Overwrite::yes);
    fill(out.tmp_path(), "new");
    throw std::runtime_error("failed half way");
  } catch (const std::runtime_error&) {
  }
  check_only_model(dir, "config.json", "{\"tag\": \"old\"}");
}

TEST_CASE("SIGINT removes the temporary folder with everything in it") {
  test::TempDir dir;
  const auto r = test::run_in_child([&] {
    AtomicDirectory out(dir / "model", Overwrite::no);
    fill(out.tmp_path(), "partial");
    std::raise(SIGINT);
  });
  CHECK(r.exit_code == 128 + SIGINT);
  CHECK(test::count_entries(dir.path()) == 0);
}

TEST_CASE("a folder output refuses a file target and a folder that holds an input") {
  test::TempDir dir;
  std::ofstream(dir / "file") << "x";
  CHECK_THROWS_WITH_AS(AtomicDirectory(dir / "file", Overwrite::yes),
                       (dir / "file" + ": is not a directory (--force replaces a folder output only by a folder)").c_str(),
                       Error);
  fill(dir / "model", "input");
  const std::string input = dir / "model/sub/model-00001-of-00001.safetensors";
  try {
    AtomicDirectory out(dir / "model", Overwrite::yes, {dir / "elsewhere.h5", input});
    FAIL("not refused");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
  }
  CHECK(test::read_all(input) == "input");
  CHECK(test::count_entries(dir.path()) == 2);
}
