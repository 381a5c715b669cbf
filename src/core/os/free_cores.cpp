#include "wavg/free_cores.hpp"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <string>

namespace wavg {

int free_cores(int cores, std::string_view loadavg) {
  cores = std::max(cores, 1);
  // "0.52 0.58 0.59 3/1234 5678": the three averages, then running/total tasks, then the last pid.
  std::size_t at = 0;
  for (int field = 0; field < 3; ++field) {
    at = loadavg.find(' ', at);
    if (at == std::string_view::npos) return cores;
    ++at;
  }
  int running = 0;
  const auto [end, ec] = std::from_chars(loadavg.data() + at, loadavg.data() + loadavg.size(), running);
  if (ec != std::errc() || end == loadavg.data() + loadavg.size() || *end != '/' || running < 1) return cores;
  return std::clamp(cores - (running - 1), 1, cores);  // the reading thread is one of the running tasks
}

int free_cores_now() {
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  std::ifstream file("/proc/loadavg");
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return free_cores(cores, text);
}

}  // namespace wavg
