#pragma once
// Two wavg runs that write one target at once take turns: each holds an flock(2) on a lock file beside the target,
// .NAME.wavg-lock, from before its writer looks at the old output until its own output is in place or gone. Why:
// a writer lists the old output's files when it starts and retires them after its commit, so two `merge --force`
// runs over one TF.js model.json both listed the same old shards, both committed, and the loser's new shards stayed
// unreferenced (issue 39). Taking turns, the second run finds the first one's output as the old one, whole.
//
// The holder removes the lock file when it is done (the signal cleanups do too), so none stays beside the target.
// A waiter may then hold a lock on a file no longer named, the classic race of removable lock files: after flock
// returns, the name must still name the locked file, or the waiter tries again. A lock file left by SIGKILL is
// unlocked (the kernel drops the dead holder's lock) and is taken and removed by the next run. A lock that cannot
// be made (a read-only folder, a name too long) is skipped: the temporary output beside it fails with the reason.

#include <string>

namespace wavg {

class OutputLock {
 public:
  OutputLock() = default;
  // Takes the lock of `target`, waiting for another process that holds it (and saying so when stderr is a
  // terminal). A target this process already holds is not waited on.
  explicit OutputLock(const std::string& target);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  OutputLock(OutputLock&& other) noexcept;
  OutputLock& operator=(OutputLock&& other) noexcept;

 private:
  void release() noexcept;

  int m_fd = -1;
  std::string m_path;
};

}  // namespace wavg
