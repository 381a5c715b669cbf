#pragma once
// Facts of the registry's formats that the pipeline and the subcommands ask for by format, kept in
// formats/registry.cpp beside the Codec rows (format.hpp): what an output needs of the disk and refuses before any
// input is read, what a format's own library leaves of an unfinished save, and how a format's name reads in a
// sentence.

#include <cstdint>
#include <string>

#include "wavg/format.hpp"

namespace wavg {

// Returns the bytes an output of `format` holding `spec` takes at least, for the free-space check, refusing (Error
// naming `display_path`) what its writer cannot store: a GGUF output's quantized blocks at their real size, and
// its refusal of K-quants it does not write; any other format, its tensors' bytes (least_output_bytes).
std::uint64_t output_bytes(FormatId format, const OutputSpec& spec, const std::string& display_path);

// Returns the display name of the format whose own library leaves an entry named `name` while it saves (Orbax's
// step folders are written as 1000.orbax-checkpoint-tmp, then renamed), or null: such an entry is no checkpoint.
const char* unfinished_save(const std::string& name);

// Returns a format's name with its article, for messages: "an orbax", "an hdf5", "a safetensors".
std::string a_format(FormatId format);

}  // namespace wavg
