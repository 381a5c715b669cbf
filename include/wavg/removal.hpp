#pragma once
// What an output may remove, one rule for every writer (STYLE 17). An output that replaces an earlier one retires
// the earlier one's files that it does not overwrite (old shards, old data files), and a writer finds them by asking
// the old model which files it uses and by its own naming pattern. Neither answer is to be trusted alone: the old
// model's list may be hand-edited or hostile (a model.json listing .git/HEAD), and a file named like ours may belong
// to another model the user keeps beside it (model.json renamed v1.json still uses model-shard1of1.bin). So a file
// is removed only when all of these hold:
//
//   - it is of the writer's own kind, named by the writer's own pattern (OwnFiles::named_like);
//   - it lies directly in the folder where the writer keeps that kind of file (OwnFiles::folder: the output's
//     own, or a store's subfolder such as an Orbax checkpoint's d/, reached through no link), a plain name, no '/',
//     and is a regular file, not a link;
//   - no other model in that folder uses it (OwnFiles::used_by_others, which the writer fills by asking each);
//   - the user said --force: without it, a file the output would remove (or write over) is a refusal, exit 2, as
//     an existing output is, so that nothing the user did not name goes without being asked.

#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "wavg/atomic_file.hpp"

namespace wavg {

// A writer's own files in its output's folder.
struct OwnFiles {
  std::string folder;                                  // the output's folder ("" for the working directory)
  std::string_view kind;                               // "TF.js shard", "TensorFlow data shard", ... for messages
  std::function<bool(const std::string&)> named_like;  // the writer's naming pattern, on a plain file name
  std::set<std::string> used_by_others;                // names another model in the folder uses: never removed
};

// Returns those of `candidates` (file names in own.folder, each once) that the output may remove under the rule
// above, in their order. Refuses (usage error, exit 2) when `overwrite` is no and any would be removed, naming it.
std::vector<std::string> removable_files(const OwnFiles& own, const std::vector<std::string>& candidates,
                                         Overwrite overwrite);

// Returns the names in `folder` that own.named_like accepts: the candidates a writer finds by its pattern.
std::vector<std::string> files_named_like(const OwnFiles& own);

}  // namespace wavg
