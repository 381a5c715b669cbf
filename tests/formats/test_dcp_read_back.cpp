// verify_output (dcp_reader.cpp), the check a DCP writer makes before commit: the finished folder is read back as
// an input and must hold the tensors meant, so that a folder wavg itself cannot read is never committed. Checked on
// the sample folder torch wrote (samples/dcp/run/step-100) against specs that agree with it and that do not.
#include <doctest/doctest.h>

#include <filesystem>

#include "dcp/dcp.hpp"
#include "support/temp_dir.hpp"
#include "wavg/error.hpp"

using namespace wavg;

namespace {

const std::string k_sample = std::string(WAVG_SAMPLES_DIR) + "/dcp/run/step-100";

std::string refusal(const std::string& folder, const OutputSpec& spec) {
  try {
    dcp::verify_output(folder, "out", spec);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("dcp read back: a folder holding the tensors meant passes; a missing, extra or reshaped one is refused") {
  const dcp::DcpReader sample(k_sample);
  OutputSpec spec;
  spec.tensors = sample.tensors();
  REQUIRE(spec.tensors.size() > 1);
  CHECK(refusal(k_sample, spec) == "");

  OutputSpec fewer;
  fewer.tensors.assign(spec.tensors.begin() + 1, spec.tensors.end());
  CHECK(refusal(k_sample, fewer) == "out: the output does not read back as written (" +
                                        std::to_string(spec.tensors.size()) + " tensors instead of " +
                                        std::to_string(fewer.tensors.size()) + "); nothing was written");
  OutputSpec renamed = spec;
  renamed.tensors[0].name += ".x";
  CHECK(refusal(k_sample, renamed) == "out: the output does not read back as written (" + renamed.tensors[0].name +
                                          " is missing); nothing was written");
  OutputSpec reshaped = spec;
  reshaped.tensors[0].shape.push_back(1);
  CHECK(refusal(k_sample, reshaped) == "out: the output does not read back as written (" + spec.tensors[0].name +
                                           " changed type or shape); nothing was written");
}

TEST_CASE("dcp read back: a folder the reader refuses is refused with the reader's words") {
  test::TempDir dir;
  const std::string out = dir / "out";
  std::filesystem::copy(k_sample, out);
  std::filesystem::resize_file(out + "/.metadata", 10);  // a pickle cut short
  const dcp::DcpReader sample(k_sample);
  OutputSpec spec;
  spec.tensors = sample.tensors();
  const std::string got = refusal(out, spec);
  CHECK(got.rfind("out: the output does not read back as written (", 0) == 0);
  CHECK(got.find("truncated") != std::string::npos);
}
