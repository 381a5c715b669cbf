#pragma once
// A scratch file that no run leaves behind: created private (0600) under $TMPDIR, removed by its destructor, and
// removed by the SIGINT/SIGTERM/SIGHUP and fault handlers (signals.hpp) when the process ends before that. For
// files wavg makes for a library that wants a path (the model.weights.h5 inside a .keras archive, for HDF5). Its
// name is unique (mkstemps), so one left by SIGKILL is never mistaken for this run's.

#include <string>

namespace wavg {

class TempFile {
 public:
  // Creates an empty file $TMPDIR/wavg-PREFIX-XXXXXX`suffix` (TMPDIR unset: /tmp); errors name `for_file`.
  TempFile(const std::string& prefix, const std::string& suffix, const std::string& for_file);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
};

}  // namespace wavg
