#pragma once
// The accessors every codec's reader writes the same way: the path it was opened with, its format (its registry
// row, whose display name format_name() returns), and the layout, tensor list and metadata its parsing fills in. A
// codec derives from this, sets the protected members while it parses, and writes only read() (and
// view/release/prefetch where it maps its data). A codec that computes a value instead (a layout from its container,
// metadata from its own message) overrides that accessor; it must not declare a member of the same name, which would
// leave the base's accessor returning the base's empty one. Not copyable: readers hold mappings and handles.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "wavg/format.hpp"

namespace wavg {

class ListedReader : public Reader {
 public:
  ListedReader(const ListedReader&) = delete;
  ListedReader& operator=(const ListedReader&) = delete;

  const std::string& path() const override { return m_path; }
  FormatId format() const override { return m_format; }
  std::string format_name() const override { return codec(m_format).display; }
  std::string layout() const override { return m_layout; }
  const std::vector<TensorInfo>& tensors() const override { return m_tensors; }
  std::map<std::string, std::string> metadata() const override { return m_metadata; }

 protected:
  ListedReader(std::string path, FormatId format) : m_path(std::move(path)), m_format(format) {}

  std::string m_path;
  std::string m_layout;
  std::vector<TensorInfo> m_tensors;
  std::map<std::string, std::string> m_metadata;

 private:
  FormatId m_format;
};

}  // namespace wavg
