// The fuzz targets' shared glue (fuzz_input.hpp).

#include "fuzz_input.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <vector>

#include "wavg/error.hpp"

namespace wavg::fuzz {

namespace {

namespace fs = std::filesystem;

// What one input may make a reader do: enough for every sample, little enough that a run stays fast. A reader
// that claims more (a huge tensor in a small file) is read only this far: the cap keeps the fuzzer's memory flat,
// and the reader's own checks of sizes against the file have already run when it opened.
constexpr std::uint64_t k_max_read_bytes = 64ull << 20;
constexpr std::uint64_t k_block_elements = 1ull << 16;
constexpr std::size_t k_max_files = 64;

const fs::path& scratch() {
  static const fs::path dir = [] {
    std::string pattern = (fs::temp_directory_path() / "wavg-fuzz-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(scratch(), ec);
    });
    return fs::path(pattern);
  }();
  return dir;
}

// Tells whether `name` is a plain relative path: no empty, "." or ".." part, no leading '/', a few levels deep.
bool plain_name(std::string_view name) {
  if (name.empty() || name.size() > 200 || name.front() == '/') return false;
  int depth = 0;
  for (std::size_t start = 0; start <= name.size();) {
    const std::size_t end = std::min(name.find('/', start), name.size());
    const std::string_view part = name.substr(start, end - start);
    if (part.empty() || part == "." || part == ".." || ++depth > 4) return false;
    for (const char c : part)
      if (c == '\0') return false;
    start = end + 1;
  }
  return true;
}

void write_file(const fs::path& path, std::string_view bytes) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Reads every tensor of `reader` in blocks, through read() and view(), up to k_max_read_bytes in all.
void read_tensors(Reader& reader) {
  std::uint64_t budget = k_max_read_bytes;
  std::vector<unsigned char> block;
  for (std::size_t i = 0; i < reader.tensors().size(); ++i) {
    const TensorInfo t = reader.tensors()[i];
    (void)reader.boundaries(i);
    const std::uint64_t size = dtype_size(t.dtype);
    const std::uint64_t count = t.count();
    for (std::uint64_t at = 0; at < count && budget >= size;) {
      const std::uint64_t n = std::min({count - at, k_block_elements, budget / size});
      block.resize(static_cast<std::size_t>(n * size));
      reader.prefetch(i, at, n);
      reader.read(i, at, n, block.data());
      if (const auto* view = static_cast<const unsigned char*>(reader.view(i, at, n))) {
        // A view lends the same bytes read() copied: a mapping too short or a wrong offset shows here.
        if (!std::equal(block.begin(), block.end(), view)) {
          std::fprintf(stderr, "tensor %s: view() and read() disagree at elements [%llu, +%llu)\n", t.name.c_str(),
                       static_cast<unsigned long long>(at), static_cast<unsigned long long>(n));
          std::abort();
        }
        reader.release(i, at, n);
      }
      budget -= n * size;
      at += n;
    }
  }
}

}  // namespace

std::string write_files(const std::uint8_t* data, std::size_t size, const std::string& main_name) {
  const fs::path& dir = scratch();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) fs::remove_all(entry.path(), ec);
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string_view sep(k_separator);
  std::size_t end = input.find(sep);
  write_file(dir / main_name, input.substr(0, end));
  for (std::size_t files = 1; end != std::string_view::npos && files < k_max_files; ++files) {
    const std::size_t name_at = end + sep.size();
    const std::size_t newline = input.find('\n', name_at);
    if (newline == std::string_view::npos) break;
    const std::string_view name = input.substr(name_at, newline - name_at);
    end = input.find(sep, newline + 1);
    const std::string_view bytes =
        input.substr(newline + 1, end == std::string_view::npos ? std::string_view::npos : end - newline - 1);
    if (plain_name(name)) write_file(dir / name, bytes);
  }
  return dir.string();
}

void refusals_only(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error&) {
    // A refusal: what a reader must do with a damaged file.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "finding: an exception other than wavg::Error escaped: %s\n", e.what());
    std::abort();
  }
}

void read_everything(const std::string& path, std::initializer_list<FormatId> formats) {
  refusals_only([&] {
    {
      const SniffInput input(path);
      if (std::none_of(formats.begin(), formats.end(), [&](FormatId id) { return codec(id).sniff(input); })) return;
    }
    const std::unique_ptr<Reader> reader = open_reader(path);
    (void)reader->format_name();
    (void)reader->layout();
    (void)reader->files();
    (void)reader->metadata();
    (void)reader->model_config();
    (void)reader->model_layers();
    (void)reader->kept_entries();
    read_tensors(*reader);
  });
}

}  // namespace wavg::fuzz

// The HDF5 structure probe spawns this executable with a hidden first argument (structure_probe.hpp): it must run
// the probe, not the fuzzer.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  if (const int helper = wavg::run_codec_helper(*argc, *argv); helper >= 0) std::_Exit(helper);
  return 0;
}
