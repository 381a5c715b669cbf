#pragma once
// One read-only memory mapping of one input file, for readers that serve blocks straight from the file
// (Reader::view). It owns the whole sequence every such reader needs: open without blocking, refuse anything but a
// regular file, map, name the mapping for the SIGBUS handler (see mapped_ranges.hpp), and undo all of it. A codec
// built on it is its parsing and nothing else.

#include <cstdint>
#include <string>

namespace wavg {

// Whether the last component of a path may be a symbolic link (TF.js shards must not be).
enum class FollowLinks { yes, no };

// Refuses (Error, exit 1, naming `path`) anything but a regular file: a FIFO would block the open forever, a
// device has no end, a directory is no checkpoint. Opens with O_NONBLOCK first, so not even the check can hang, and
// returns the open descriptor (O_CLOEXEC, blocking mode restored); the caller closes it.
int open_regular_file(const std::string& path, FollowLinks follow = FollowLinks::yes);

class MappedFile {
 public:
  // Opens and maps `path`. An empty file maps to nothing: size() is 0 and data() nullptr.
  explicit MappedFile(std::string path, FollowLinks follow = FollowLinks::yes);
  // Maps the regular file already open as `fd`, named `path` in errors; the caller keeps `fd` and closes it (a
  // reader that also pread()s the file, or checked it before mapping).
  MappedFile(std::string path, int fd);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&&) = delete;

  const std::string& path() const { return m_path; }
  std::uint64_t size() const { return m_size; }
  const unsigned char* data() const { return m_data; }
  // Tells whether [offset, offset + length) lies inside the file, without overflowing.
  bool contains(std::uint64_t offset, std::uint64_t length) const {
    return offset <= m_size && length <= m_size - offset;
  }
  // Drops [begin, end) from the process's resident memory (see release_mapped).
  void release(std::uint64_t begin, std::uint64_t end) const;
  // Starts read-ahead of [begin, end).
  void prefetch(std::uint64_t begin, std::uint64_t end) const;
  // Tells the kernel the whole file is read once, front to back (read-ahead larger, pages dropped behind).
  void advise_sequential() const;

 private:
  void map(int fd);

  std::string m_path;
  const unsigned char* m_data = nullptr;
  std::uint64_t m_size = 0;
};

}  // namespace wavg
