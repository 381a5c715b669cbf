#include "hdf5/template_copy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "wavg/error.hpp"

namespace wavg {

TemplateCopy::TemplateCopy(const std::string& source, int out_fd, std::vector<ByteRange> holes, std::string display)
    : m_out(out_fd), m_source(source), m_display(std::move(display)) {
  m_in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (m_in < 0) fail(m_display, "cannot copy " + source + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(m_in, &st) != 0) fail(m_display, "cannot copy " + source + ": " + std::strerror(errno));
  m_size = static_cast<std::uint64_t>(st.st_size);
  if (::ftruncate(m_out, static_cast<off_t>(m_size)) != 0)
    fail(m_display, std::string("cannot size the output: ") + std::strerror(errno));
  std::sort(holes.begin(), holes.end());
  std::uint64_t at = 0;
  for (const auto& [begin, end] : holes) {
    WAVG_ASSERT(begin <= end && end <= m_size);
    if (begin > at) fill({at, begin});
    at = std::max(at, end);
  }
  if (at < m_size) fill({at, m_size});
}

TemplateCopy::~TemplateCopy() {
  if (m_in >= 0) ::close(m_in);
}

void TemplateCopy::fill(ByteRange range) {
  auto [at, end] = range;
  WAVG_ASSERT(at <= end && end <= m_size);
  // copy_file_range keeps the bytes inside the kernel (or shares blocks on file systems that can); plain reads and
  // writes are the fallback where it is refused (across file systems on old kernels, some network file systems).
  bool in_kernel = true;
  std::vector<char> buffer;
  while (at < end) {
    ssize_t n = -1;
    if (in_kernel) {
      auto src = static_cast<off_t>(at), dst = static_cast<off_t>(at);
      n = ::copy_file_range(m_in, &src, m_out, &dst, end - at, 0);
      if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
        in_kernel = false;
        continue;
      }
    } else {
      buffer.resize(1 << 20);
      n = ::pread(m_in, buffer.data(), std::min<std::uint64_t>(buffer.size(), end - at), static_cast<off_t>(at));
      for (ssize_t done = 0; n > 0 && done < n;) {
        const ssize_t w =
            ::pwrite(m_out, buffer.data() + done, static_cast<std::size_t>(n - done), static_cast<off_t>(at) + done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) fail(m_display, std::string("cannot write the output: ") + std::strerror(errno));
        done += w;
      }
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(m_display, "cannot copy " + m_source + ": " + std::strerror(errno));
    if (n == 0) fail(m_display, "cannot copy " + m_source + ": the file shrank while it was read");
    at += static_cast<std::uint64_t>(n);
  }
}

}  // namespace wavg
