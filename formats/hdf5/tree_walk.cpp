// The coverage walk (hdf5_reader.hpp): every numeric dataset of the file that its layout did not list is a tensor
// too, named by its path, so a merge averages it instead of keeping input 1's values unnoticed (a sub-object a
// layout rule missed, a stray dataset). The same walk notes every object header's bytes for check_data_ranges.
//
// Why a walk of our own rather than H5Lvisit, then H5Oget_info and H5Dopen by each dataset's full path, and then
// H5Ovisit for the headers: every lookup by a path from the root resolves each component again, and the cost grew
// faster than the file (h5py files of one dataset per group, probe and reader together: 12.5k datasets 2.9 s of
// CPU, 25k 6.9 s, 100k over the probe's budget; the header check was also data ranges x headers). Here each group
// is listed once through its open handle (H5Literate) and each link looked up in that group alone, one level, so
// a file of 4x the datasets costs about 4x (25k 3.9 s, 50k 6.3 s, 100k 11.4 s at load 12 on 2 cores). The order is
// H5Lvisit's: links by name, a group's contents right after its link; a group reached again (a second hard link, a
// cycle) is not walked again; soft and external links name no object here.
//
// A file the native parser read (native_index.hpp) is walked over its index instead, in the same order and to the
// same tensors: the library is asked only about the datasets the parser did not read whole.

#include <unordered_set>

#include "hdf5/hdf5_reader.hpp"
#include "wavg/error.hpp"

namespace wavg {

namespace {

// Deeper than any real file nests (Keras: model_weights/LAYER/LAYER/VAR, six levels); bounds the recursion.
constexpr int k_max_depth = 256;

// Lists a group's hard links by name into `out`.
herr_t hard_links(hid_t group, std::vector<std::string>& out) {
  const auto cb = [](hid_t, const char* name, const H5L_info_t* info, void* data) -> herr_t {
    if (info->type == H5L_TYPE_HARD) static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
  };
  hsize_t at = 0;
  return H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, &at, cb, &out);
}

}  // namespace

struct Hdf5Reader::TreeWalk {
  std::unordered_set<std::string> listed;  // the datasets the layout named
  std::unordered_set<haddr_t> seen;        // objects whose header was noted (groups: walked)
  std::vector<Metadata> headers;           // object headers, with what to call them
  std::uint64_t base = 0;                  // the userblock: addresses count from its end
};

void Hdf5Reader::add_uncovered() {
  if (m_native) return add_uncovered_natively();
  TreeWalk walk;
  for (const TensorInfo& t : m_tensors) walk.listed.insert(t.name);
  h5::Handle fcpl = h5::check(H5Fget_create_plist(m_file.get()), H5Pclose, m_path, "cannot read the file's layout");
  hsize_t userblock = 0;
  H5Pget_userblock(fcpl.get(), &userblock);
  walk.base = userblock;
  H5F_info2_t finfo{};
  if (H5Fget_info2(m_file.get(), &finfo) >= 0)
    walk.headers.push_back(
        {{userblock, userblock + std::max<hsize_t>(finfo.super.super_size, 8)}, "the superblock", {}});
  h5::Handle root = h5::check(H5Gopen2(m_file.get(), "/", H5P_DEFAULT), H5Gclose, m_path, "cannot open the root group");
  H5O_info_t info{};
  h5::check(H5Oget_info2(root.get(), &info, H5O_INFO_BASIC | H5O_INFO_HDR), m_path, "cannot read the root group");
  note_header(walk, info, "/");
  walk_group(walk, root.get(), "", 0);
  H5Eclear2(H5E_DEFAULT);
  m_headers = std::move(walk.headers);
}

// The same walk over what the native parser read: its links are in the library walk's order, and every dataset it
// did not read whole (chunked, filtered, converted, ...) is opened through the library by its path.
void Hdf5Reader::add_uncovered_natively() {
  std::unordered_set<std::string> listed;
  for (const TensorInfo& t : m_tensors) listed.insert(t.name);
  for (const h5native::Link& link : m_native->links()) {
    const h5native::Object& o = m_native->object(link.object);
    if (o.kind != h5native::Object::Kind::dataset || listed.contains(link.path)) continue;
    if (o.dataset.known)
      add_native(o.dataset, link.path, Listed::no);
    else
      add_opened(h5::open_dataset(m_file.get(), link.path, m_path, "cannot open dataset " + link.path), link.path,
                 Listed::no);
  }
  for (const h5native::Index::Span& s : m_native->metadata())
    m_headers.push_back({{s.begin, s.end},
                         h5native::Index::what(s.kind),
                         s.kind == h5native::Index::Kind::superblock ? std::string_view()
                         : s.link == h5native::Index::k_root         ? std::string_view("/")
                                                                     : m_native->links()[s.link].path});
}

// Notes the header of the object `info` describes (named `name` in messages) the first time the walk meets it;
// returns false when it was met before.
bool Hdf5Reader::note_header(TreeWalk& walk, const H5O_info_t& info, const std::string& name) {
  if (!walk.seen.insert(info.addr).second) return false;
  // A header in one chunk occupies exactly its total size; of a header in several only the first bytes are known
  // to be at its address (the continuation chunks lie elsewhere).
  const std::uint64_t size = info.hdr.nchunks == 1 ? info.hdr.space.total : 16;
  walk.headers.push_back({{walk.base + info.addr, walk.base + info.addr + size},
                          "the object header of ",
                          m_header_names.emplace_back(name)});
  return true;
}

void Hdf5Reader::walk_group(TreeWalk& walk, hid_t group, const std::string& prefix, int depth) {
  if (depth > k_max_depth)
    fail(m_path, clipped(prefix, 120) + ": groups nest deeper than " + std::to_string(k_max_depth) + " levels");
  std::vector<std::string> links;
  h5::check(hard_links(group, links), m_path, "cannot walk the HDF5 tree");
  for (const std::string& link : links) {
    const std::string name = prefix + link;
    H5O_info_t info{};
    if (H5Oget_info_by_name2(group, link.c_str(), &info, H5O_INFO_BASIC | H5O_INFO_HDR, H5P_DEFAULT) < 0) {
      H5Eclear2(H5E_DEFAULT);
      fail(m_path, name + ": cannot read its object header (corrupt HDF5 file)");
    }
    const bool first = note_header(walk, info, name);
    if (info.type == H5O_TYPE_GROUP && first) {
      h5::Handle g =
          h5::check(H5Gopen2(group, link.c_str(), H5P_DEFAULT), H5Gclose, m_path, "cannot open group " + name);
      walk_group(walk, g.get(), name + "/", depth + 1);
    } else if (info.type == H5O_TYPE_DATASET && !walk.listed.contains(name)) {
      add_opened(h5::open_dataset(group, link, m_path, "cannot open dataset " + name), name, Listed::no);
    }
  }
}

}  // namespace wavg
