#pragma once
// One read-only memory mapping of one input file, for readers that serve blocks straight from the file
// (Reader::view). It owns the whole sequence every such reader needs: open without blocking, refuse anything but a
// regular file, map, name the mapping for the SIGBUS handler (see mapped_ranges.hpp), and undo all of it. A codec
// built on it is its parsing and nothing else.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace wavg {

// Whether the last component of a path may be a symbolic link (TF.js shards must not be).
enum class FollowLinks { yes, no };

// Refuses (Error, exit 1, naming `path`) anything but a regular file: a FIFO would block the open forever, a
// device has no end, a directory is no checkpoint. Opens with O_NONBLOCK first, so not even the check can hang, and
// returns the open descriptor (O_CLOEXEC, blocking mode restored); the caller closes it. The check is made on the
// opened descriptor (fstat), so there is no window between a check and the open.
int open_regular_file(const std::string& path, FollowLinks follow = FollowLinks::yes);
// Opens `path` as open_regular_file does, but returns -1 with `why` set ("is a FIFO, not a regular file", "is a
// symbolic link", the system's reason) instead of throwing, for a caller that words the error itself.
int try_open_regular_file(const std::string& path, FollowLinks follow, std::string& why);
// Checks that `path` opens as a regular file (open_regular_file, then close): before a sniffer opens it.
void require_regular_file(const std::string& path);
// Returns what is wrong with `path`, a file or folder a model folder `folder` holds, when it leads out of that
// folder: "is a symbolic link, ..." or "lies outside the model folder FOLDER (through a linked folder)"; "" when
// it does not (or does not exist: opening it says so). wavg follows no link out of a model folder (HF, DeepSpeed).
std::string link_out_of_folder(const std::string& folder, const std::string& path);
// Returns the absolute path, all symbolic links resolved, of the file open as `fd` (from /proc/self/fd), or "".
std::string resolved_path_of(int fd);

// The pages of one mapping, unmapped when the last holder lets go: a MappedFile, or a provenance hash thread that
// reads the same file through it (find_mapping) and may outlive the reader.
struct MappedRegion {
  const unsigned char* data = nullptr;
  std::uint64_t size = 0;
  std::uint64_t device = 0, inode = 0;
  MappedRegion(const unsigned char* d, std::uint64_t n, std::uint64_t dev, std::uint64_t ino)
      : data(d), size(n), device(dev), inode(ino) {}
  ~MappedRegion();
  MappedRegion(const MappedRegion&) = delete;
  MappedRegion& operator=(const MappedRegion&) = delete;
};

// Returns a live whole-file mapping of `path` that a MappedFile made (the same device, inode and size), or null:
// the fingerprint then hashes the pages the engine reads, instead of copying them out with pread().
std::shared_ptr<const MappedRegion> find_mapping(const std::string& path);

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
  // Drops [begin, end) from the process's resident memory (see release_mapped). A range smaller than the margin
  // release_mapped drops around it is dropped only when it lies in another margin-sized window than the last such
  // range: dropping the margin for each of 100,000 tensors of 8 bytes re-faulted the whole neighbourhood for every
  // one (most of a convert's CPU in madvise and page faults); once per window keeps the pages behind dropped.
  void release(std::uint64_t begin, std::uint64_t end) const;
  // Starts read-ahead of [begin, end).
  void prefetch(std::uint64_t begin, std::uint64_t end) const;
  // Tells the kernel the whole file is read once, front to back (read-ahead larger, pages dropped behind).
  void advise_sequential() const;

 private:
  void map(int fd);

  std::string m_path;
  std::shared_ptr<const MappedRegion> m_region;
  const unsigned char* m_data = nullptr;
  std::uint64_t m_size = 0;
  mutable std::atomic<std::uint64_t> m_released_window{UINT64_MAX};  // see release()
};

}  // namespace wavg
