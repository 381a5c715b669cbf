#pragma once
// Opens the file's structure (and its root metadata) once in a process of its own before this process trusts HDF5
// with it. HDF5 1.10 can loop forever, fault, or allocate gigabytes on a corrupt global heap (where
// variable-length strings such as layer_names live) or object header. The child runs under a time and memory
// limit; its fate tells, and this process reports a corrupt file instead of hanging, crashing or swapping. A clean
// error in the child is passed up through a pipe, so the parent never repeats what failed; so is, on success, the
// structure the child found (Hdf5Reader::structure(), structure_handoff.cpp), so the parent never repeats the walk
// either: HDF5 spends about 50 us of CPU per dataset it opens, and a file of 100k small datasets took 5 s a walk
// (wavg's own parser, native_index.hpp, now reads most files' structure in the child at about 1 us a dataset; the
// library still reads their attributes and is the whole walk for the rest).
//
// The probe is the HDF5 reader itself (Hdf5Reader with Probe::no) in this executable, spawned (posix_spawn, safe
// in a process that runs threads, unlike fork) with a hidden first argument that main() hands to
// run_codec_helper(); the parent reads the child's fate and its answer, so this file knows nothing of the file's
// layout.

#include <optional>
#include <string>

namespace wavg {

// Opens `path`'s structure with the HDF5 reader in a child process under a time and memory limit and returns the
// structure it found (Hdf5Reader::structure()); throws Error (exit 1) naming `path` with the child's own error, or
// saying that HDF5 hung, crashed or needed too much memory. Returns nullopt when no child can be started.
std::optional<std::string> probe_structure(const std::string& path);

}  // namespace wavg
