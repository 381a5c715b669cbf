#pragma once
// Opening a file that a reader must refuse: the test writes the bytes, opens them with the reader, and checks the
// refusal's shape (exit 1, exactly one problem, one line), returning the message for the test to compare.

#include <doctest/doctest.h>

#include <string>

#include "support/temp_dir.hpp"
#include "wavg/error.hpp"

namespace wavg::test {

// Returns the one-line error of opening `bytes`, written as `name`, with `Reader`; empty when it opened.
template <typename Reader>
std::string open_error(const std::string& name, const std::string& bytes) {
  TempDir dir;
  const std::string path = dir.write(name, bytes);
  try {
    Reader r(path);
  } catch (const Error& e) {
    REQUIRE(e.code() == ExitCode::runtime);
    REQUIRE(e.problems().size() == 1);
    const std::string what = e.problems()[0].what;
    CHECK(what.find('\n') == std::string::npos);
    return what;
  }
  return {};
}

}  // namespace wavg::test
