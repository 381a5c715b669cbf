// The .index table through LevelDB, with the handle checks LevelDB leaves to its callers (see tf_table.hpp).

#include "tensorflow/tf_table.hpp"

#include <fcntl.h>
#include <leveldb/env.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>
#include <leveldb/table_builder.h>
#include <snappy.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "common/byte_cursor.hpp"
#include "tensorflow/crc32c.hpp"
#include "wavg/error.hpp"

namespace wavg::tftable {

namespace {

constexpr std::uint64_t k_magic = 0xdb4775248b80fb57ull;
constexpr std::uint64_t k_footer = 48;
constexpr std::uint64_t k_trailer = 5;  // type byte + masked CRC-32C
// Far above any real block (TensorFlow writes 4 KiB blocks, its index block holds one entry per block), far below
// what would hurt to allocate.
constexpr std::uint64_t k_max_block = 64ull << 20;

// A block's entries, walked without throwing (a malformed one is reported by the caller, with its context).
struct Cursor {
  const unsigned char* p;
  const unsigned char* end;

  bool varint(std::uint64_t& v) { return decode_varint(p, end, v); }
};

class Checker {
 public:
  Checker(const unsigned char* data, std::uint64_t size, const std::string& file)
      : m_data(data), m_size(size), m_file(file) {}

  // Checks a block handle and its block's trailer, and returns the block's contents, uncompressed.
  std::string block(Cursor& c, const char* what) {
    std::uint64_t offset = 0, size = 0;
    if (!c.varint(offset) || !c.varint(size)) corrupt(std::string(what) + " has a malformed block handle");
    if (offset > m_size || size > m_size - offset || k_trailer > m_size - offset - size || size > k_max_block)
      corrupt(std::string(what) + " points past the end of the file (offset " + std::to_string(offset) + ", size " +
              std::to_string(size) + ", file " + std::to_string(m_size) + " bytes)");
    const unsigned char* b = m_data + offset;
    const unsigned char type = b[size];
    std::uint32_t stored = 0;
    std::memcpy(&stored, b + size + 1, 4);
    if (crc32c::unmask(stored) != crc32c::extend(crc32c::extend(0, b, size), &type, 1))
      corrupt(std::string(what) + ": block checksum mismatch");
    if (type == 0) return std::string(reinterpret_cast<const char*>(b), size);
    if (type != 1) corrupt(std::string(what) + ": unknown block compression type " + std::to_string(type));
    std::size_t length = 0;
    const char* src = reinterpret_cast<const char*>(b);
    std::string out;
    if (!snappy::GetUncompressedLength(src, size, &length) || length > k_max_block ||
        !snappy::Uncompress(src, size, &out))
      corrupt(std::string(what) + ": corrupt Snappy-compressed block");
    return out;
  }

  // Walks the footer and the index block and checks every data block's handle, checksum and size.
  void check() {
    if (m_size < k_footer) corrupt("too short for a TensorFlow index (" + std::to_string(m_size) + " bytes)");
    std::uint64_t magic = 0;
    std::memcpy(&magic, m_data + m_size - 8, 8);
    if (magic != k_magic) corrupt("bad magic number in the footer (not a TensorFlow index)");
    Cursor footer{m_data + m_size - k_footer, m_data + m_size - 8};
    block(footer, "the footer's metaindex handle");
    const std::string index = block(footer, "the footer's index handle");
    // The index block: entries (shared, non-shared and value lengths as varints, key delta, value), then restart
    // offsets and their count. Only the values (data block handles) matter here.
    if (index.size() < 4) corrupt("the index block is too short");
    std::uint32_t restarts = 0;
    std::memcpy(&restarts, index.data() + index.size() - 4, 4);
    if (restarts > (index.size() - 4) / 4) corrupt("the index block's restart count is too large");
    // LevelDB walks the block from its first restart point: it must be the block's start, so that LevelDB reads
    // exactly the entries checked here.
    std::uint32_t first = 0;
    if (restarts > 0) std::memcpy(&first, index.data() + index.size() - 4 - 4ull * restarts, 4);
    if (restarts == 0 || first != 0) corrupt("the index block's first restart point is not 0");
    const auto* base = reinterpret_cast<const unsigned char*>(index.data());
    Cursor c{base, base + index.size() - 4 - 4ull * restarts};
    std::uint64_t key_length = 0;
    std::uint64_t blocks_end = 0;  // where the data block before ends, with its trailer
    while (c.p < c.end) {
      std::uint64_t shared = 0, unshared = 0, value = 0;
      if (!c.varint(shared) || !c.varint(unshared) || !c.varint(value) || shared > key_length ||
          unshared > static_cast<std::uint64_t>(c.end - c.p) ||
          value > static_cast<std::uint64_t>(c.end - c.p) - unshared)
        corrupt("the index block has a malformed entry");
      key_length = shared + unshared;
      c.p += unshared;
      Cursor handle{c.p, c.p + value};
      // LevelDB writes each data block once, one after the other; entries that name one block again (or overlap
      // one) would have it inflated and walked once per entry, so they are refused and each block checked once.
      Cursor peek = handle;
      std::uint64_t offset = 0, size = 0;
      if (peek.varint(offset) && peek.varint(size) && offset < blocks_end)
        corrupt("two index entries name overlapping data blocks (at offset " + std::to_string(offset) + ")");
      block(handle, "an index entry");
      blocks_end = offset + size + k_trailer;
      c.p += value;
    }
  }

  [[noreturn]] void corrupt(const std::string& what) const { fail(m_file, "corrupt index: " + what); }

 private:
  const unsigned char* m_data;
  std::uint64_t m_size;
  const std::string& m_file;
};

// LevelDB's view of the mapped index: reads are slices of the mapping, short at the end of the file.
class MemoryFile final : public leveldb::RandomAccessFile {
 public:
  MemoryFile(const unsigned char* data, std::uint64_t size) : m_data(data), m_size(size) {}
  leveldb::Status Read(std::uint64_t offset, std::size_t n, leveldb::Slice* result, char*) const override {
    if (offset > m_size) return leveldb::Status::IOError("read past the end of the index");
    *result =
        leveldb::Slice(reinterpret_cast<const char*>(m_data) + offset, std::min<std::uint64_t>(n, m_size - offset));
    return leveldb::Status::OK();
  }

 private:
  const unsigned char* m_data;
  std::uint64_t m_size;
};

// LevelDB's view of the output: appends to an open descriptor. Flushing to disk is the AtomicFile's commit.
class DescriptorFile final : public leveldb::WritableFile {
 public:
  explicit DescriptorFile(int fd) : m_fd(fd) {}
  leveldb::Status Append(const leveldb::Slice& data) override {
    const char* p = data.data();
    std::size_t n = data.size();
    while (n > 0) {
      const ssize_t w = ::write(m_fd, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return leveldb::Status::IOError(std::strerror(errno));
      p += w;
      n -= static_cast<std::size_t>(w);
    }
    return leveldb::Status::OK();
  }
  leveldb::Status Close() override { return leveldb::Status::OK(); }
  leveldb::Status Flush() override { return leveldb::Status::OK(); }
  leveldb::Status Sync() override { return leveldb::Status::OK(); }

 private:
  int m_fd;
};

}  // namespace

void read_table(const unsigned char* data, std::uint64_t size, const std::string& file,
                const std::function<void(const std::string&, const std::string&)>& f) {
  Checker checker(data, size, file);
  checker.check();
  MemoryFile memory(data, size);
  leveldb::Options options;
  options.paranoid_checks = true;
  leveldb::Table* raw = nullptr;
  leveldb::Status s = leveldb::Table::Open(options, &memory, size, &raw);
  if (!s.ok()) checker.corrupt(s.ToString());
  const std::unique_ptr<leveldb::Table> table(raw);
  leveldb::ReadOptions read;
  read.verify_checksums = true;
  read.fill_cache = false;
  const std::unique_ptr<leveldb::Iterator> it(table->NewIterator(read));
  std::string last;
  bool first = true;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string key = it->key().ToString();
    if (!first && key <= last) checker.corrupt("keys are not in increasing order at \"" + key + "\"");
    f(key, it->value().ToString());
    last = key;
    first = false;
  }
  if (!it->status().ok()) checker.corrupt(it->status().ToString());
}

void write_table(const std::string& path, const std::vector<std::pair<std::string, std::string>>& entries,
                 const std::string& display) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) fail(display, std::strerror(errno));
  DescriptorFile file(fd);
  leveldb::Options options;
  options.compression = leveldb::kNoCompression;  // as TensorFlow writes it: every release can read it
  leveldb::TableBuilder builder(options, &file);
  for (const auto& [key, value] : entries) builder.Add(key, value);
  const leveldb::Status s = builder.Finish();
  ::close(fd);
  if (!s.ok()) fail(display, "cannot write the index: " + s.ToString());
}

}  // namespace wavg::tftable
