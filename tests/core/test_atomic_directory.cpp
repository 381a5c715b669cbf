// A folder output appears whole or not at all: committed by one rename, or, over an existing folder, by moving its
// files in with the switch files last and the old model's files removed after, keeping the rest of the folder;
// removed with its contents on an exception or an interrupt.

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

// Writes a small model folder, creating it when it does not exist: config.json and one weights file.
void fill(const std::string& dir, const std::string& tag) {
  fs::create_directories(dir);
  std::ofstream(dir + "/config.json") << "{\"tag\": \"" << tag << "\"}";
  std::ofstream(dir + "/model.safetensors") << tag;
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
  check_only_model(dir, "model.safetensors", "new");
}

TEST_CASE("with --force the old model is replaced; without, the folder is refused") {
  test::TempDir dir;
  fill(dir / "model", "old");
  CHECK_THROWS_AS(AtomicDirectory(dir / "model", Overwrite::no), Error);
  commit_folder(dir / "model", Overwrite::yes, "new");
  check_only_model(dir, "config.json", "{\"tag\": \"new\"}");
  CHECK(test::read_all(dir / "model/model.safetensors") == "new");
  CHECK(test::count_entries(dir / "model") == 2);
}

TEST_CASE("with --force everything of the folder but the model stays byte for byte, and retired files go") {
  test::TempDir dir;
  fill(dir / "model", "old");
  std::ofstream(dir / "model/old-00001-of-00002.safetensors") << "old shard";
  fs::create_directories(dir / "model/.git/objects");
  std::ofstream(dir / "model/.git/HEAD") << "ref: refs/heads/main\n";
  fs::create_directories(dir / "model/checkpoint-500");
  std::ofstream(dir / "model/checkpoint-500/optimizer.pt") << "optimizer";
  std::ofstream(dir / "model/checkpoint-500/model.safetensors") << "nested";
  std::ofstream(dir / "model/notes.txt") << "my notes";
  fs::create_symlink("notes.txt", dir / "model/readme-link");
  {
    AtomicDirectory out(dir / "model", Overwrite::yes);
    fill(out.tmp_path(), "new");
    set_switch_files(out.tmp_path(), {"model.safetensors"});
    retire_in_folder(out.tmp_path(), "model.safetensors");  // replaced, not removed
    retire_in_folder(out.tmp_path(), "old-00001-of-00002.safetensors");
    out.commit();
  }
  CHECK(test::read_all(dir / "model/model.safetensors") == "new");
  CHECK(test::read_all(dir / "model/config.json") == "{\"tag\": \"new\"}");
  CHECK(!fs::exists(dir / "model/old-00001-of-00002.safetensors"));
  CHECK(test::read_all(dir / "model/.git/HEAD") == "ref: refs/heads/main\n");
  CHECK(fs::is_directory(dir / "model/.git/objects"));
  CHECK(test::read_all(dir / "model/checkpoint-500/optimizer.pt") == "optimizer");
  CHECK(test::read_all(dir / "model/checkpoint-500/model.safetensors") == "nested");
  CHECK(test::read_all(dir / "model/notes.txt") == "my notes");
  CHECK(fs::read_symlink(dir / "model/readme-link") == "notes.txt");
  CHECK(test::count_entries(dir / "model") == 6);
  CHECK(test::count_entries(dir.path()) == 1);
}

TEST_CASE("a replacement that cannot place a file takes back the new files it placed and keeps the old model") {
  test::TempDir dir;
  fill(dir / "model", "old");
  fs::create_directories(dir / "model/blocked/inside");  // a file of the new output cannot replace a folder
  {
    AtomicDirectory out(dir / "model", Overwrite::yes);
    std::ofstream(out.tmp_path() + "/added.txt") << "new";
    std::ofstream(out.tmp_path() + "/blocked") << "new";
    std::ofstream(out.tmp_path() + "/model.safetensors") << "new";
    set_switch_files(out.tmp_path(), {"model.safetensors"});
    CHECK_THROWS_AS(out.commit(), Error);
  }
  CHECK(test::read_all(dir / "model/model.safetensors") == "old");
  CHECK(!fs::exists(dir / "model/added.txt"));
  CHECK(fs::is_directory(dir / "model/blocked/inside"));
  CHECK(test::count_entries(dir.path()) == 1);
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
  CHECK_THROWS_WITH_AS(
      AtomicDirectory(dir / "file", Overwrite::yes),
      (dir / "file" + ": is not a directory (--force replaces a folder output only by a folder)").c_str(), Error);
  fill(dir / "model", "input");
  const std::string input = dir / "model/model.safetensors";
  try {
    AtomicDirectory out(dir / "model", Overwrite::yes, {dir / "elsewhere.h5", input});
    FAIL("not refused");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
  }
  CHECK(test::read_all(input) == "input");
  CHECK(test::count_entries(dir.path()) == 2);
}
