#pragma once
// An output that is a directory (a Hugging Face model folder: config.json, the safetensors shards and their index)
// appears whole or not at all, as an AtomicFile does: it is written into a temporary directory beside the target,
// .NAME.wavg-XXXXXX, and renamed into place on commit() when the target does not exist.
//
// An existing target (Overwrite::yes) is never replaced as a whole: a model folder also holds what is not the
// model (a cloned repository's .git/, checkpoint-N/ folders, notes, links), and those stay byte for byte. commit()
// moves the new files into it one rename(2) each: first every file but the switch files, whose names the writer
// chose so that they meet no file of the old model, then the switch files (the index, or the single weights file,
// which a reader looks for first), and after the switch removes the retired files (the old model's weights that the
// new one does not overwrite). A reader finds the old model or the new one, never a mix. The writer names those
// files (set_switch_files, retire_in_folder) and refuses a target that is not a model folder. An error, an
// exception, or SIGINT/SIGTERM/SIGHUP before the commit removes the temporary directory and everything in it;
// placing runs with those signals held back, and a failure while placing takes the placed new-named files back.

#include <functional>
#include <string>
#include <string_view>
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
  // Flushes every file of the temporary directory to disk and puts the directory, or its files, in place.
  void commit();
};

// The functions below shape how commit() fills an existing target; a writer is handed the temporary directory's
// path, not the AtomicDirectory.

// Names the files of the temporary directory `tmp_dir` that switch a reader from the old model to the new one:
// placed after every other file, in this order.
void set_switch_files(const std::string& tmp_dir, std::vector<std::string> names);
// Refuses (usage error, exit 2) an existing, non-empty folder `folder` in which `holds_model` finds no model of the
// writer's kind (`kind`: "Hugging Face model", "distributed checkpoint"): --force replaces a model folder's model,
// never a folder of other things (a home directory, a folder of notes), even one a writer could add its files to.
void check_model_folder(const std::string& folder, const std::function<bool()>& holds_model, std::string_view kind);
// Records `name`, a file of the target being replaced (relative to it: "d/0a1b..." for a file in a subfolder), for
// removal after the switch (in the order recorded) unless the new output has a file of that name; a subfolder that
// this empties goes too. Only files removable_files (removal.hpp) allows.
void retire_in_folder(const std::string& tmp_dir, const std::string& name);

}  // namespace wavg
