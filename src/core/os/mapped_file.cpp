#include "wavg/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

#include "wavg/error.hpp"
#include "wavg/mapped_ranges.hpp"

namespace wavg {

namespace {
constexpr const char* k_symbolic_link = "is a symbolic link";

// Every live region, for find_mapping.
std::mutex g_regions_mutex;
std::vector<std::weak_ptr<const MappedRegion>> g_regions;
}  // namespace

MappedRegion::~MappedRegion() {
  unregister_mapping(data);
  ::munmap(const_cast<unsigned char*>(data), static_cast<std::size_t>(size));
}

std::shared_ptr<const MappedRegion> find_mapping(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return nullptr;
  const std::lock_guard lock(g_regions_mutex);
  std::shared_ptr<const MappedRegion> found;
  std::erase_if(g_regions, [&](const std::weak_ptr<const MappedRegion>& w) {
    std::shared_ptr<const MappedRegion> r = w.lock();
    if (!r) return true;
    if (!found && r->device == static_cast<std::uint64_t>(st.st_dev) &&
        r->inode == static_cast<std::uint64_t>(st.st_ino) && r->size == static_cast<std::uint64_t>(st.st_size))
      found = std::move(r);
    return false;
  });
  return found;
}

std::string link_out_of_folder(const std::string& folder, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(path, ec)))
    return "is a symbolic link, which wavg does not follow out of a model folder";
  const std::string base = fs::canonical(folder, ec).string();
  if (ec) return {};
  const std::string real = fs::canonical(path, ec).string();
  if (ec) return {};
  const std::string prefix = base == "/" ? base : base + "/";
  if (real.compare(0, prefix.size(), prefix) != 0 || real.size() == prefix.size())
    return "lies outside the model folder " + folder + " (through a linked folder)";
  return {};
}

int try_open_regular_file(const std::string& path, FollowLinks follow, std::string& why) {
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;
  if (follow == FollowLinks::no) flags |= O_NOFOLLOW;
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    why = errno == ELOOP && follow == FollowLinks::no ? k_symbolic_link : std::strerror(errno);
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    why = std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    why = S_ISDIR(st.st_mode)    ? "is a directory"
          : S_ISFIFO(st.st_mode) ? "is a FIFO, not a regular file"
          : S_ISSOCK(st.st_mode) ? "is a socket, not a regular file"
                                 : "is a device, not a regular file";
    return -1;
  }
  // O_NONBLOCK only mattered for the open itself; reads of a regular file ignore it, but say what we mean.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

int open_regular_file(const std::string& path, FollowLinks follow) {
  std::string why;
  const int fd = try_open_regular_file(path, follow, why);
  if (fd < 0) fail(path, why == k_symbolic_link ? why + " (refused)" : why);
  return fd;
}

void require_regular_file(const std::string& path) { ::close(open_regular_file(path)); }

std::string resolved_path_of(int fd) {
  char buf[PATH_MAX + 1];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(link.c_str(), buf, PATH_MAX);
  if (n <= 0) return "";
  return std::string(buf, static_cast<std::size_t>(n));
}

MappedFile::MappedFile(std::string path, FollowLinks follow) : m_path(std::move(path)) {
  const int fd = open_regular_file(m_path, follow);
  try {
    map(fd);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);  // the mapping keeps the file open
}

MappedFile::MappedFile(std::string path, int fd) : m_path(std::move(path)) { map(fd); }

void MappedFile::map(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(m_path, std::strerror(errno));
  m_size = static_cast<std::uint64_t>(st.st_size);
  if (m_size > std::numeric_limits<std::size_t>::max()) fail(m_path, "too large to map on this machine");
  if (m_size == 0) return;
  void* map = ::mmap(nullptr, static_cast<std::size_t>(m_size), PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) fail(m_path, std::string("cannot map the file: ") + std::strerror(errno));
  m_data = static_cast<const unsigned char*>(map);
  register_mapping(m_data, m_size, m_path.c_str());
  m_region = std::make_shared<const MappedRegion>(m_data, m_size, static_cast<std::uint64_t>(st.st_dev),
                                                  static_cast<std::uint64_t>(st.st_ino));
  const std::lock_guard lock(g_regions_mutex);
  g_regions.push_back(m_region);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : m_path(std::move(other.m_path)),
      m_region(std::move(other.m_region)),
      m_data(std::exchange(other.m_data, nullptr)),
      m_size(std::exchange(other.m_size, 0)),
      m_released_window(other.m_released_window.load()) {}

MappedFile::~MappedFile() = default;  // the region unmaps when its last holder lets go

void MappedFile::release(std::uint64_t begin, std::uint64_t end) const {
  constexpr std::uint64_t window = 2u << 20;  // release_mapped's margin
  if (end - begin < window && m_released_window.exchange(begin / window) == begin / window) return;
  release_mapped(m_data, m_size, begin, end);
}

void MappedFile::prefetch(std::uint64_t begin, std::uint64_t end) const { prefetch_mapped(m_data, m_size, begin, end); }

void MappedFile::advise_sequential() const {
  if (m_data) ::madvise(const_cast<unsigned char*>(m_data), static_cast<std::size_t>(m_size), MADV_SEQUENTIAL);
}

}  // namespace wavg
