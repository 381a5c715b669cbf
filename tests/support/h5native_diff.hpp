#pragma once
// wavg's own walk of an HDF5 file's structure (Hdf5Reader::Walk::native) against the HDF5 library's walk
// (Walk::library), the independent reference: what each finds (Hdf5Reader::structure(), byte for byte), whether
// the native path was taken, and every tensor's bytes through both readers and as the test wrote them.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/h5corpus.hpp"

namespace wavg::test {

// What a variant expects of the native walk: to walk the file itself, to leave the whole file to the library, or
// that the file is refused (both walks then give the same first problem).
enum class Expect { native, library, refused };

struct WalkReport {
  bool refused = false;
  bool walked_natively = false;
  std::size_t tensors = 0;
  std::string error;  // the library walk's first problem when refused
};

// Opens `path` with both walks and checks that they agree, that the native walk behaved as `expect` says (not
// checked when nullopt), and, when `written` is given, that the file yields exactly those tensors with those
// bytes. A refusal must name `refusal` in its message when that is not empty.
WalkReport check_walks_agree(const std::string& path, std::optional<Expect> expect, const Written* written = nullptr,
                             const std::string& refusal = "");

// Renders a structure() answer (formats/hdf5/structure_handoff.cpp) one field a line, or nullopt when it does not
// decode.
std::optional<std::vector<std::string>> structure_lines(std::string_view answer);
// Names the first difference of two structure() answers: the first differing field, or the first differing byte.
std::string first_difference(std::string_view a, std::string_view b);

}  // namespace wavg::test
