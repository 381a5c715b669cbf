// An input truncated by another program while wavg reads it through its memory mapping: the access raises SIGBUS,
// which must become the usual one-line error naming the file, exit 1, and no temporary output left behind. Run in
// a forked child (test::run_in_child).

#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "hdf5/hdf5_reader.hpp"
#include "safetensors/safetensors.hpp"
#include "support/h5raw.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"
#include "wavg/atomic_file.hpp"

using namespace wavg;

namespace {

// Opens `input` with `open`, starts an output in `dir`, truncates the input to `keep` bytes, then reads the last
// element of tensor 0 through view() on `threads` threads at once: what the engine does, after another program
// shrank the file.
template <typename Open>
test::RunResult truncate_while_mapped(const std::string& input, const std::string& dir, off_t keep, Open open,
                                      int threads = 1) {
  return test::run_in_child([&] {
    AtomicFile out(dir + "/out.bin", Overwrite::no);
    auto reader = open(input);
    const std::uint64_t n = reader->tensors()[0].count();
    const void* p = reader->view(0, n - 1, 1);
    if (!p) ::_exit(10);
    if (::truncate(input.c_str(), keep) != 0) ::_exit(11);
    std::atomic<int> ready{0};
    const auto touch = [&] {
      ++ready;
      while (ready.load() < threads) {
      }
      volatile float v = *static_cast<const float*>(p);
      (void)v;
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(touch);
    touch();
    ::_exit(12);  // not reached: the read above faults
  });
}

}  // namespace

TEST_CASE("a safetensors input truncated while mapped gives an error naming it, and no output is left") {
  test::TempDir in_dir, out_dir;
  const std::uint64_t count = 1 << 18;  // 1 MiB of float32: the last element is far past the kept page
  std::string header = R"({"w":{"dtype":"F32","shape":[262144],"data_offsets":[0,1048576]}})";
  header.append((8 - header.size() % 8) % 8, ' ');  // aligned data, so view() serves it from the mapping
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(header.size());
  bytes += header + std::string(count * 4, '\0');
  const std::string path = in_dir.write("in.safetensors", bytes);
  const auto r = truncate_while_mapped(path, out_dir.path(), 4096,
                                       [](const std::string& p) { return std::make_unique<SafetensorsReader>(p); });
  CHECK(r.exit_code == 1);
  CHECK(r.err == "wavg: error: " + path +
                     ": the file shrank while wavg was reading it (changed by another "
                     "program?)\n");
  CHECK(test::count_entries(out_dir.path()) == 0);
}

TEST_CASE("an HDF5 input truncated while mapped gives an error naming it, and no output is left") {
  test::TempDir in_dir, out_dir;
  const std::string path = in_dir / "in.h5";
  test::write_floats(path, "w", {1 << 18}, std::vector<float>(1 << 18, 1.0f), true);
  const auto r = truncate_while_mapped(path, out_dir.path(), 4096,
                                       [](const std::string& p) { return std::make_unique<Hdf5Reader>(p); });
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(path + ": the file shrank while wavg was reading it") != std::string::npos);
  CHECK(test::count_entries(out_dir.path()) == 0);
}

TEST_CASE("a file that shrinks under several reading threads is reported once") {
  test::TempDir in_dir, out_dir;
  std::string header = R"({"w":{"dtype":"F32","shape":[262144],"data_offsets":[0,1048576]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(header.size());
  bytes += header + std::string(1 << 20, '\0');
  const std::string path = in_dir.write("in.safetensors", bytes);
  for (int run = 0; run < 5; ++run) {
    in_dir.write("in.safetensors", bytes);
    const auto r = truncate_while_mapped(
        path, out_dir.path(), 4096, [](const std::string& p) { return std::make_unique<SafetensorsReader>(p); }, 8);
    CHECK(r.exit_code == 1);
    CHECK(r.err == "wavg: error: " + path +
                       ": the file shrank while wavg was reading it (changed by another "
                       "program?)\n");
  }
  CHECK(test::count_entries(out_dir.path()) == 0);
}
