// What an output may remove (removal.hpp): only plain files of its own folder, named by its own pattern, used by
// no other model there, and only with --force; without it such a file is a refusal naming it.

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.hpp"
#include "wavg/error.hpp"
#include "wavg/removal.hpp"

using namespace wavg;
namespace fs = std::filesystem;

namespace {

OwnFiles shards_in(const std::string& folder) {
  return {folder, "test shard", [](const std::string& name) { return name.ends_with("-shard.bin"); }, {}};
}

}  // namespace

TEST_CASE("only plain files of the folder, named by the pattern and used by no other model, may go") {
  test::TempDir dir;
  fs::create_directory(dir / "sub");
  for (const char* name : {"a-shard.bin", "b-shard.bin", "used-shard.bin", "notes.txt", "sub/c-shard.bin"})
    std::ofstream(dir / name) << "x";
  fs::create_directory(dir / "d-shard.bin");                // a folder named like a shard
  fs::create_symlink("notes.txt", dir / "link-shard.bin");  // a link named like a shard
  OwnFiles own = shards_in(dir.path());
  own.used_by_others = {"used-shard.bin"};
  const std::vector<std::string> candidates = {"a-shard.bin", "notes.txt",      "sub/c-shard.bin", "../a-shard.bin",
                                               "d-shard.bin", "link-shard.bin", "used-shard.bin",  "missing-shard.bin",
                                               "a-shard.bin", "b-shard.bin"};
  CHECK(removable_files(own, candidates, Overwrite::yes) == std::vector<std::string>{"a-shard.bin", "b-shard.bin"});
  const std::vector<std::string> named = files_named_like(own);
  CHECK(named ==
        std::vector<std::string>{"a-shard.bin", "b-shard.bin", "d-shard.bin", "link-shard.bin", "used-shard.bin"});
}

TEST_CASE("without --force a file the output would remove is a refusal naming it") {
  test::TempDir dir;
  std::ofstream(dir / "old-shard.bin") << "x";
  const OwnFiles own = shards_in(dir.path());
  try {
    removable_files(own, {"notes.txt", "old-shard.bin"}, Overwrite::no);
    FAIL("no refusal");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
    CHECK(e.problems().front().file == dir / "old-shard.bin");
  }
  CHECK(removable_files(own, {"notes.txt", "new-shard.bin"}, Overwrite::no).empty());
  CHECK(fs::exists(dir / "old-shard.bin"));
}
