// Fuzzes wavg's own walk of an HDF5 file's structure (formats/hdf5/native_index.*) on the input's bytes alone:
// whatever it makes of them, every path it lists resolves, and every byte range it names lies inside the file.

#include <cstdio>
#include <cstdlib>
#include <optional>

#include "hdf5/native_index.hpp"

namespace {

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "finding: the native HDF5 walk %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::optional<wavg::h5native::Index> index;
  try {
    index = wavg::h5native::Index::read(data, size);
  } catch (const wavg::h5native::Index::Damage&) {
    return 0;  // damage the walk names (a B-tree sibling link): the reader refuses the file, as it should
  }
  if (!index) return 0;
  for (const wavg::h5native::Link& link : index->links()) {
    const wavg::h5native::Object* found = index->find(link.path);
    check(found == &index->object(link.object), "lists a path that find() does not resolve to its object");
    const wavg::h5native::Dataset& d = found->dataset;
    if (found->kind == wavg::h5native::Object::Kind::dataset && d.known && !d.null)
      check(d.offset <= size && d.stored <= size - d.offset, "places a dataset's elements outside the file");
  }
  for (const auto& span : index->metadata())
    check(span.begin <= span.end && span.end <= size, "names a metadata range outside the file");
  return 0;
}
