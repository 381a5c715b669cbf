// The default thread count's cores: those the runnable tasks of /proc/loadavg leave free, this process not counted.

#include <doctest/doctest.h>

#include "wavg/free_cores.hpp"

using namespace wavg;

TEST_CASE("free cores are the cores less the tasks running beside this one, at least one") {
  CHECK(free_cores(16, "0.52 0.58 0.59 1/1234 5678\n") == 16);  // only the reader runs
  CHECK(free_cores(16, "3.10 2.00 1.00 4/1234 5678\n") == 13);  // three others
  CHECK(free_cores(2, "9.00 9.00 9.00 12/801 5678\n") == 1);    // a busy machine: one worker, as -j1
  CHECK(free_cores(2, "0.00 0.00 0.00 2/801 5678\n") == 1);
  CHECK(free_cores(8, "20.0 20.0 20.0 1/100 5678") == 8);  // the averages lag; the running count decides
}

TEST_CASE("text that is not /proc/loadavg's leaves every core") {
  for (const char* text : {"", "0.52 0.58", "0.52 0.58 0.59 x/1234 5678", "0.52 0.58 0.59 3", "0.52 0.58 0.59 0/9 1"})
    CHECK(free_cores(4, text) == 4);
  CHECK(free_cores(0, "0.5 0.5 0.5 1/10 2") == 1);
}

TEST_CASE("this machine's free cores are at least one") { CHECK(free_cores_now() >= 1); }
