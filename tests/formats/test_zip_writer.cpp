// The .pt zip writer's CRC-32s, computed from the bytes as they are written: in order, out of order, in pieces
// large enough to be split across threads, written over (read back instead), and empty. Each CRC in the central
// directory must equal zlib's CRC-32 of the entry's final bytes, computed here from what the test wrote.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "pytorch/zip_layout.hpp"
#include "support/temp_dir.hpp"

using namespace wavg;

namespace {
std::uint32_t central_crc(const std::string& file, const pytorch::ZipEntry& e) {
  std::uint32_t crc = 0;
  for (std::size_t i = 0; i < 4; ++i)
    crc |= std::uint32_t{static_cast<unsigned char>(file[e.central + 16 + i])} << (8 * i);
  return crc;
}
}  // namespace

TEST_CASE("zip writer: each entry's CRC-32 is its final bytes', whatever order and pieces they came in") {
  test::TempDir dir;
  const std::string path = dir / "out.zip";
  std::vector<std::string> content(5);
  std::uint32_t x = 7;
  const std::size_t sizes[] = {1000, (std::size_t{9} << 20) + 5, 0, 300, 4097};
  for (std::size_t i = 0; i < content.size(); ++i)
    for (std::size_t k = 0; k < sizes[i]; ++k) content[i] += static_cast<char>((x = x * 1103515245u + 12345u) >> 24);
  {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    pytorch::ZipWriter zip(fd, path);
    for (std::size_t i = 0; i < content.size(); ++i) {
      char name[24];  // not "e" + std::to_string(i): GCC 12's -Wrestrict misfires on the string concatenation
      std::snprintf(name, sizeof name, "e%zu", i);
      zip.add(name, content[i].size());
    }
    const std::vector<std::uint64_t> at = zip.lay_out();
    for (std::size_t k = 1000; k >= 100; k -= 100)  // back to front
      zip.pwrite_all(content[0].data() + k - 100, 100, at[0] + k - 100);
    const std::size_t half = content[1].size() / 2;  // each half large enough to be split across threads
    zip.pwrite_all(content[1].data() + half, content[1].size() - half, at[1] + half);
    zip.pwrite_all(content[1].data(), half, at[1]);
    zip.pwrite_all(std::string(300, 'x').data(), 300, at[3]);  // written over below: read back at the end
    content[3].replace(10, 20, std::string(20, 'y'));
    zip.pwrite_all(content[3].data(), 300, at[3]);
    zip.pwrite_all(content[4].data() + 7, 4090, at[4] + 7);  // a gap, filled last
    zip.pwrite_all(content[4].data(), 7, at[4]);
    zip.finish();
    ::close(fd);
  }
  std::ifstream in(path, std::ios::binary);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto entries =
      pytorch::read_zip_directory(path, reinterpret_cast<const unsigned char*>(file.data()), file.size());
  REQUIRE(entries.size() == content.size());
  for (std::size_t i = 0; i < content.size(); ++i) {
    CAPTURE(i);
    CHECK(file.compare(entries[i].data_offset, content[i].size(), content[i]) == 0);
    const auto want = crc32_z(0, reinterpret_cast<const Bytef*>(content[i].data()), content[i].size());
    CHECK(central_crc(file, entries[i]) == want);
  }
}

TEST_CASE("zip writer: archives at offsets of one file (a DCP rank file), with given and written entries") {
  // Each archive's offsets are relative to its start, its size() its bytes to the end of its central directory:
  // read_zip_directory (and libzip behind it) reads each slice as an archive of its own.
  test::TempDir dir;
  const std::string path = dir / "__0_0.distcp";
  const std::string a = "pickled", b(5000, 'b'), c = "3\n";
  std::uint64_t starts[2] = {0, 0}, sizes[2] = {0, 0};
  {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    std::uint64_t at = 0;
    for (int k = 0; k < 2; ++k) {
      pytorch::ZipWriter zip(fd, path, at);
      zip.add_bytes("archive/data.pkl", a);
      zip.add("archive/data/0", b.size());
      zip.add_bytes("archive/version", c);
      const std::vector<std::uint64_t> data = zip.lay_out();
      CHECK(data[1] % 64 == 0);  // at a multiple of 64 from the start of a 64-aligned archive
      zip.pwrite_all(b.data(), b.size(), data[1]);
      zip.finish();
      starts[k] = at;
      sizes[k] = zip.size();
      at += (zip.size() + 63) / 64 * 64 + 64 * k;
    }
    ::close(fd);
  }
  std::ifstream in(path, std::ios::binary);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(file.size() == starts[1] + sizes[1]);  // the last archive ends the file: nothing written past size()
  for (int k = 0; k < 2; ++k) {
    CAPTURE(k);
    const std::string slice = file.substr(starts[k], sizes[k]);
    const auto entries = pytorch::read_zip_directory(path, reinterpret_cast<const unsigned char*>(slice.data()),
                                                     slice.size(), pytorch::ZipSource::embedded);
    REQUIRE(entries.size() == 3);
    const std::string* want[] = {&a, &b, &c};
    for (std::size_t i = 0; i < 3; ++i) {
      CHECK(slice.compare(entries[i].data_offset, want[i]->size(), *want[i]) == 0);
      CHECK(central_crc(slice, entries[i]) ==
            crc32_z(0, reinterpret_cast<const Bytef*>(want[i]->data()), want[i]->size()));
    }
  }
}

TEST_CASE("zip writer: the ranks of a distributed merge write one archive; rank 0 joins their CRC-32 spans") {
  // Rank 0's writer and another rank's lay out the same archive over one file; each writes its share, the other
  // rank's spans go to rank 0 as text (crc_spans, join_crcs), and rank 0's finish() writes CRC-32s equal to zlib's
  // of the final bytes: an entry split between the ranks, one written by the other rank only, one both wrote over
  // (read back), and a given entry the other rank laid out too but does not report.
  test::TempDir dir;
  const std::string path = dir / "out.pt";
  std::vector<std::string> content(3);
  std::uint32_t x = 11;
  const std::size_t sizes[] = {(std::size_t{9} << 20) + 3, 4097, 500};
  for (std::size_t i = 0; i < content.size(); ++i)
    for (std::size_t k = 0; k < sizes[i]; ++k) content[i] += static_cast<char>((x = x * 1103515245u + 12345u) >> 24);
  const std::string given = "pickled";
  const auto lay_out = [&](pytorch::ZipWriter& zip) {
    zip.add_bytes("archive/data.pkl", given);
    for (std::size_t i = 0; i < content.size(); ++i) {
      char name[40];  // snprintf, not +: GCC 12's -Wrestrict misfires on the string concatenation
      std::snprintf(name, sizeof name, "archive/data/%zu", i);
      zip.add(name, content[i].size());
    }
    return zip.lay_out();
  };
  {
    const int fd0 = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644), fd1 = ::open(path.c_str(), O_RDWR);
    REQUIRE(fd0 >= 0);
    REQUIRE(fd1 >= 0);
    pytorch::ZipWriter rank0(fd0, path), rank1(fd1, path);
    const std::vector<std::uint64_t> at = lay_out(rank0);
    REQUIRE(lay_out(rank1) == at);
    const std::size_t cut = content[0].size() / 3;
    rank0.pwrite_all(content[0].data(), cut, at[1]);
    rank1.pwrite_all(content[0].data() + cut, content[0].size() - cut, at[1] + cut);
    rank1.pwrite_all(content[1].data(), content[1].size(), at[2]);
    rank0.pwrite_all(content[2].data(), 300, at[3]);
    rank1.pwrite_all(content[2].data() + 200, 300, at[3] + 200);  // over rank 0's last 100 bytes
    rank0.join_crcs(rank1.crc_spans());
    rank0.finish();
    ::close(fd0);
    ::close(fd1);
  }
  std::ifstream in(path, std::ios::binary);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto entries =
      pytorch::read_zip_directory(path, reinterpret_cast<const unsigned char*>(file.data()), file.size());
  REQUIRE(entries.size() == 4);
  content.insert(content.begin(), given);
  for (std::size_t i = 0; i < content.size(); ++i) {
    CAPTURE(i);
    CHECK(file.compare(entries[i].data_offset, content[i].size(), content[i]) == 0);
    CHECK(central_crc(file, entries[i]) == crc32_z(0, reinterpret_cast<const Bytef*>(content[i].data()),
                                                   content[i].size()));
  }
}
