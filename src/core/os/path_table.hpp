#pragma once
// A fixed table of paths that a signal handler unlinks without allocating or taking a lock: the temporary files
// (temp_file.cpp) and the output locks (output_lock.cpp) a run holds, so that an interrupted run leaves neither
// behind. Registering and unregistering take the table's mutex; unlink_all() reads the slots through their atomic
// flags only, so it is async-signal-safe.

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>

namespace wavg {

template <std::size_t N>
class PathTable {
 public:
  static constexpr std::size_t k_max_path = 4096;  // bytes of a path, its NUL included

  // Registers `path`; returns false when it is k_max_path bytes or longer, or when every slot is taken.
  bool add(const std::string& path) {
    if (path.size() >= k_max_path) return false;
    const std::lock_guard lock(m_mutex);
    for (Slot& s : m_slots)
      if (!s.used.load()) {
        std::snprintf(s.path, sizeof s.path, "%s", path.c_str());
        s.used.store(true, std::memory_order_release);
        return true;
      }
    return false;
  }
  // Unregisters `path` (its slot no longer removes it on a signal).
  void remove(const std::string& path) {
    const std::lock_guard lock(m_mutex);
    for (Slot& s : m_slots)
      if (s.used.load() && path == s.path) s.used.store(false, std::memory_order_release);
  }
  // Unlinks every registered path; called from signal handlers (signals::add_cleanup).
  void unlink_all() const noexcept {
    for (const Slot& s : m_slots)
      if (s.used.load(std::memory_order_acquire)) ::unlink(s.path);
  }

 private:
  struct Slot {
    std::atomic<bool> used{false};
    char path[k_max_path];
  };
  std::array<Slot, N> m_slots;
  std::mutex m_mutex;
};

}  // namespace wavg
