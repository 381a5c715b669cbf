// Folder outputs copied from input 1 and rewritten in place (pytorch/copied_files.hpp): a copy takes only the bytes the
// caller does not write, a storage whose data the caller writes only in part keeps the rest, and each tracked entry's
// CRC-32 (computed from the bytes copied and written; read back only for an entry written over) is zlib's CRC-32 of its
// final bytes, computed here from the bytes the test put there. The expected file is built independently: input 1's
// bytes with the written ranges replaced and the CRC-32 fields patched.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "pytorch/copied_files.hpp"
#include "support/temp_dir.hpp"

using namespace wavg;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put_crc(std::string& file, std::uint64_t at, const std::string& data) {
  const auto crc = crc32_z(0, reinterpret_cast<const Bytef*>(data.data()), data.size());
  for (std::size_t i = 0; i < 4; ++i) file[at + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
}

// `n` pseudo-random bytes (an LCG's high bytes) from `seed`.
std::string noise(std::size_t n, std::uint32_t seed) {
  std::string out;
  while (out.size() < n) out += static_cast<char>((seed = seed * 1103515245u + 12345u) >> 24);
  return out;
}

}  // namespace

TEST_CASE("copied files: only unwritten bytes are copied; CRC-32s come from the bytes copied and written") {
  test::TempDir dir;
  const std::string original = dir / "in.zip";
  const std::vector<std::string> content = {noise(1000, 11), noise(200, 12), noise(50, 13)};
  {
    const int fd = ::open(original.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    pytorch::ZipWriter zip(fd, original);
    for (const char* name : {"a", "b", "c"}) zip.add(name, content[name[0] - 'a'].size());
    const std::vector<std::uint64_t> at = zip.lay_out();
    for (std::size_t i = 0; i < content.size(); ++i) zip.pwrite_all(content[i].data(), content[i].size(), at[i]);
    zip.finish();
    ::close(fd);
  }
  const std::string in = read_all(original);
  const auto entries =
      pytorch::read_zip_directory(original, reinterpret_cast<const unsigned char*>(in.data()), in.size());
  REQUIRE(entries.size() == 3);
  const pytorch::ZipEntry &a = entries[0], &b = entries[1], &c = entries[2];

  // Two copies: the archive as it is, and the archive twice over, the second one's entries rewritten (an archive
  // that moved, as a DCP rank file of the kept chunks has them).
  test::TempDir out_dir;
  const MappedFile from(original);
  const std::string new_a(500, 'A'), new_b(200, 'B'), new_c(50, 'C');
  std::string want_whole = in, want_twice = in + in;
  {
    pytorch::CopiedFiles out(out_dir.path(), "out");
    pytorch::CopySpec whole;
    whole.written = {{a.data_offset + 100, 500}, {b.data_offset, 200}, {c.data_offset, 50}};  // a in part
    whole.entries = {{0, 0, b}, {0, 0, a}, {0, 0, c}};
    const std::size_t f = out.copy("whole.zip", from, whole);
    pytorch::CopySpec twice;
    twice.ranges = {{0, in.size()}, {0, in.size()}};
    twice.written = {{in.size() + a.data_offset + 100, 500}};
    twice.entries = {{in.size(), 0, a}};
    const std::size_t g = out.copy("twice.zip", from, twice);
    out.write(f, new_a.data() + 250, 250, a.data_offset + 350);  // out of order
    out.write(f, new_b.data(), 200, b.data_offset);
    out.write(f, new_a.data(), 250, a.data_offset + 100);
    out.write(f, new_b.data(), 50, c.data_offset);  // c written over: its CRC-32 read back
    out.write(f, new_c.data(), 50, c.data_offset);
    out.write(g, new_a.data(), 500, in.size() + a.data_offset + 100);
    out.finish(Provenance(std::map<std::string, std::string>{{"k", "v"}}));
  }
  want_whole.replace(a.data_offset + 100, 500, new_a);
  want_whole.replace(b.data_offset, 200, new_b);
  want_whole.replace(c.data_offset, 50, new_c);
  for (const pytorch::ZipEntry* e : {&a, &b, &c}) {
    const std::string data = want_whole.substr(e->data_offset, e->size);
    put_crc(want_whole, e->central + 16, data);
    put_crc(want_whole, e->local_header + 14, data);
  }
  want_twice.replace(in.size() + a.data_offset + 100, 500, new_a);
  const std::string data = want_twice.substr(in.size() + a.data_offset, a.size);
  put_crc(want_twice, in.size() + a.central + 16, data);
  put_crc(want_twice, in.size() + a.local_header + 14, data);
  CHECK(read_all(out_dir / "whole.zip") == want_whole);
  CHECK(read_all(out_dir / "twice.zip") == want_twice);
  CHECK(read_all(out_dir / "wavg.json").find("\"k\": \"v\"") != std::string::npos);
}
