#pragma once
// Writes HDF5 outputs. When input 1 is an HDF5 file the output starts as a byte copy of it, so every group,
// attribute, non-float dataset, dtype and shape is kept exactly; the merged values are then written over the
// copy's datasets (with pwrite() at the dataset's offset where input 1 was read directly, else H5Dwrite; the bytes
// that pwrite() replaces are not copied first, see template_copy.hpp), and
// tensors dropped under --tensors intersection are unlinked. A tensor whose dtype changes (--out-dtype) is unlinked
// and created anew with the new type, so its bytes are never the template's. The provenance is written as root
// attributes (scalar UTF-8 strings). Otherwise a fresh file gets one contiguous dataset per
// tensor, with intermediate groups made from the '/' in tensor names.

#include <memory>
#include <string>

#include "wavg/format.hpp"

namespace wavg {

std::unique_ptr<Writer> create_hdf5_writer(const std::string& tmp_path, const std::string& display_path,
                                           const OutputSpec& spec);

}  // namespace wavg
