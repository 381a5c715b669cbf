#pragma once
// What every fuzz target shares: a fuzz input made into the files a reader opens, and one reader driven over all
// it offers, so that a target says only which rows of the registry it fuzzes and what its files are called.
//
// A fuzz input is one file or several. The bytes up to the first separator are the target's main file; each
// separator "\n--wavg-fuzz-file:NAME\n" starts another file, NAME relative to the main file's folder. seeds.sh
// packs a sample folder (a TF.js model.json and its shards, a DCP checkpoint) the same way, so that a mutation can
// reach any of its files.
//
// The glue also defines LLVMFuzzerInitialize: a target's process is spawned again as the HDF5 structure probe
// (structure_probe.hpp), and that hidden command line must reach run_codec_helper before libFuzzer reads it.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>

#include "wavg/format.hpp"

namespace wavg::fuzz {

// The separator that starts another file of a fuzz input, before its name and a newline.
inline constexpr char k_separator[] = "\n--wavg-fuzz-file:";

// Writes the files of a fuzz input into this process's scratch folder (emptied first) and returns the folder's path.
// The main file is called `main_name`; a file whose name is not a plain relative path is left out.
std::string write_files(const std::uint8_t* data, std::size_t size, const std::string& main_name);

// Runs `body`: a wavg::Error is a refusal and ends it quietly; any other exception is a finding (aborts, naming it).
void refusals_only(const std::function<void()>& body);

// Opens `path` as wavg opens an input (open_reader), when one of `formats`' sniffers claims it, and asks the reader
// for all it offers: every tensor read in blocks and viewed, its cut points, layers, metadata and files. Refusals
// are quiet (refusals_only).
void read_everything(const std::string& path, std::initializer_list<FormatId> formats);

}  // namespace wavg::fuzz
