#pragma once
// An output that is a directory (a Hugging Face model folder: config.json, the safetensors shards and their index)
// appears whole or not at all, as an AtomicFile does: it is written into a temporary directory beside the target,
// .NAME.wavg-XXXXXX, and renamed into place on commit(). With Overwrite::yes an existing target is exchanged with
// the new directory in one renameat2(RENAME_EXCHANGE), so that at every moment the target is the old folder or the
// new one, and the old folder, now at the temporary name, is removed after; where the file system cannot exchange,
// the old folder is moved aside first and removed after. An error, an exception, or SIGINT/SIGTERM/SIGHUP before
// the commit removes the temporary directory and everything in it.

#include <string>
#include <vector>

#include "wavg/atomic_file.hpp"

namespace wavg {

class AtomicDirectory : public AtomicOutput {
 public:
  // Creates an empty temporary directory beside `target`. Refuses (usage error, exit 2) an existing target unless
  // `overwrite`, a target that is not a directory even then, and a target that is or holds one of `inputs` (every
  // file the inputs consist of, Reader::files(): replacing the folder would remove them).
  AtomicDirectory(std::string target, Overwrite overwrite, const std::vector<std::string>& inputs = {});
  ~AtomicDirectory();

  // tmp_path() is the temporary directory to write the output's files into.
  // Flushes every file of the temporary directory to disk, puts the directory in place and removes the folder it
  // replaced.
  void commit();
};

}  // namespace wavg
