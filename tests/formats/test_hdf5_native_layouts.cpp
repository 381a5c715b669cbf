// wavg's native walk of HDF5's structure against the HDF5 library's walk (support/h5native_diff.hpp), continued
// from test_hdf5_native.cpp: links of every kind, files the native walk must leave whole to the library (newer
// superblocks, new-style groups, version 2 object headers, other address sizes), files both walks must refuse
// with the same first problem, and the Keras layouts (formats/hdf5/keras_layout.hpp).

#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "support/h5corpus.hpp"
#include "support/h5native_diff.hpp"
#include "support/temp_dir.hpp"

using namespace wavg::test;

namespace {

hid_t refuse_traversal(const char*, hid_t, const void*, size_t, hid_t, hid_t) { return H5I_INVALID_HID; }

// Lets the test write external links while it lives. wavg unregisters HDF5's external-link class (h5::init) so
// that no file opens another, and HDF5 creates no link of an unregistered class: this registers a stand-in that
// cannot be followed, and unregisters it again so that the readers see the class as wavg leaves it.
class ExternalLinks {
 public:
  ExternalLinks() {
    static const H5L_class_t k_stand_in = {
        H5L_LINK_CLASS_T_VERS, H5L_TYPE_EXTERNAL, "test stand-in", nullptr, nullptr, nullptr,
        refuse_traversal,      nullptr,           nullptr};
    m_registered = H5Lis_registered(H5L_TYPE_EXTERNAL) == 0 && H5Lregister(&k_stand_in) >= 0;
  }
  ~ExternalLinks() {
    if (m_registered) H5Lunregister(H5L_TYPE_EXTERNAL);
  }
  ExternalLinks(const ExternalLinks&) = delete;
  ExternalLinks& operator=(const ExternalLinks&) = delete;

 private:
  bool m_registered = false;
};

void external_link(hid_t file, const std::string& name) {
  const ExternalLinks allowed;
  h5_ok(H5Lcreate_external("other.h5", "/x", file, name.c_str(), H5P_DEFAULT, H5P_DEFAULT), "external link");
}

// How group `name` keeps its links: a symbol table (old style) or link messages (compact or dense, new style).
H5G_storage_type_t storage_of(hid_t file, const std::string& name) {
  H5G_info_t info{};
  h5_ok(H5Gget_info_by_name(file, name.c_str(), &info, H5P_DEFAULT), "group info");
  return info.storage_type;
}

void little_tree(H5Writer& w) {
  w.numbers<float>("a/x", H5T_IEEE_F32LE, {2, 2}, floats(4, 1));
  w.numbers<std::int32_t>("a/b/y", H5T_STD_I32LE, {3}, {1, -2, 3});
  w.numbers<double>("z", H5T_IEEE_F64LE, {}, {0.25});
}

H5Id file_access(H5F_libver_t low, H5F_libver_t high) {
  H5Id fapl = plist(H5P_FILE_ACCESS);
  h5_ok(H5Pset_libver_bounds(fapl, low, high), "libver bounds");
  return fapl;
}

struct Addresses {
  std::uint64_t base = 0, header = 0, data = 0;  // the user block's size; header and data as stored (after it)
};

Addresses addresses_of(const std::string& path, const std::string& dataset) {
  H5Id f = h5_ok(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open " + path);
  H5Id d = h5_ok(H5Dopen2(f, dataset.c_str(), H5P_DEFAULT), H5Dclose, "open " + dataset);
  H5Id fcpl = h5_ok(H5Fget_create_plist(f), H5Pclose, "file creation properties");
  hsize_t base = 0;
  h5_ok(H5Pget_userblock(fcpl, &base), "user block");
  H5O_info_t info{};
  h5_ok(H5Oget_info2(d, &info, H5O_INFO_BASIC), "object info");
  return {base, info.addr, H5Dget_offset(d) - base};  // H5Dget_offset counts the user block in
}

// Rewrites the stored data address of contiguous dataset `dataset` (in its layout message, the first occurrence
// of the address after the start of its object header) to `to`.
void patch_data_address(const std::string& path, const std::string& dataset, std::uint64_t to) {
  const Addresses a = addresses_of(path, dataset);
  std::string bytes = read_all(path), from(8, '\0'), into(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) {
    from[i] = static_cast<char>(a.data >> (8 * i));
    into[i] = static_cast<char>(to >> (8 * i));
  }
  const std::size_t at = bytes.find(from, a.base + a.header);
  REQUIRE(at < a.base + a.header + 512);
  bytes.replace(at, 8, into);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace

TEST_CASE("native walk: soft links skipped, a group reached twice and a cycle walked once") {
  TempDir dir;
  H5Writer w(dir / "links.h5");
  w.numbers<float>("data/x", H5T_IEEE_F32LE, {3}, floats(3, 1));
  w.numbers<float>("data/y", H5T_IEEE_F32LE, {2}, floats(2, 2));
  w.numbers<float>("g/v", H5T_IEEE_F32LE, {2}, floats(2, 3));
  w.group("g/sub");
  const hid_t f = w.file();
  h5_ok(H5Lcreate_soft("/data/x", f, "alias_x", H5P_DEFAULT, H5P_DEFAULT), "soft link to a dataset");
  h5_ok(H5Lcreate_soft("/data", f, "alias_group", H5P_DEFAULT, H5P_DEFAULT), "soft link to a group");
  h5_ok(H5Lcreate_soft("/missing", f, "nowhere", H5P_DEFAULT, H5P_DEFAULT), "dangling soft link");
  h5_ok(H5Lcreate_hard(f, "g", f, "h", H5P_DEFAULT, H5P_DEFAULT), "group linked twice");
  h5_ok(H5Lcreate_hard(f, "g", f, "g/sub/loop", H5P_DEFAULT, H5P_DEFAULT), "cycle");
  h5_ok(H5Lcreate_hard(f, "/", f, "data/root", H5P_DEFAULT, H5P_DEFAULT), "the root in a child");
  check_walks_agree(w.path(), Expect::native, &w.close());
}

TEST_CASE("native walk: files it leaves whole to the library") {
  TempDir dir;
  for (const auto& [name, low] : {std::pair{"latest.h5", H5F_LIBVER_LATEST}, std::pair{"v18.h5", H5F_LIBVER_V18}}) {
    H5Writer w(dir / name, H5P_DEFAULT, file_access(low, H5F_LIBVER_LATEST));
    little_tree(w);
    check_walks_agree(w.path(), Expect::library, &w.close());
  }
  {  // a new-style group deep in an old-style tree: links in the header (compact) or a fractal heap (dense)
    H5Writer w(dir / "creation_order.h5");
    little_tree(w);
    H5Id gcpl = plist(H5P_GROUP_CREATE);
    h5_ok(H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED), "creation order");
    w.group("a/b/dense", gcpl);
    w.group("compact", gcpl);
    for (int i = 0; i < 20; ++i) w.numbers<float>("a/b/dense/d" + std::to_string(i), H5T_IEEE_F32LE, {1}, floats(1, i));
    w.numbers<float>("compact/c", H5T_IEEE_F32LE, {2}, floats(2, 9));
    CHECK(storage_of(w.file(), "a/b/dense") == H5G_STORAGE_TYPE_DENSE);
    CHECK(storage_of(w.file(), "compact") == H5G_STORAGE_TYPE_COMPACT);
    check_walks_agree(w.path(), Expect::library, &w.close());
  }
  {  // tracking attributes' creation order takes a version 2 object header ("OHDR")
    H5Writer w(dir / "ohdr.h5");
    little_tree(w);
    H5Id dcpl = plist(H5P_DATASET_CREATE);
    h5_ok(H5Pset_attr_creation_order(dcpl, H5P_CRT_ORDER_TRACKED), "attribute order");
    w.numbers<float>("a/b/ordered", H5T_IEEE_F32LE, {2}, floats(2, 4), dcpl);
    H5O_info_t info{};
    h5_ok(H5Oget_info_by_name2(w.file(), "a/b/ordered", &info, H5O_INFO_HDR, H5P_DEFAULT), "header");
    CHECK(info.hdr.version == 2);
    check_walks_agree(w.path(), Expect::library, &w.close());
  }
  for (const std::string at : {"a/b/ext", "ext"}) {  // a symbol table holds no external link: the group converts
    H5Writer w(dir / "external_link.h5");
    little_tree(w);
    external_link(w.file(), at);
    CHECK(storage_of(w.file(), at == "ext" ? "/" : "a/b") == H5G_STORAGE_TYPE_COMPACT);
    check_walks_agree(w.path(), Expect::library, &w.close());
  }
  {  // nor a name in UTF-8
    H5Writer w(dir / "utf8.h5");
    little_tree(w);
    H5Id lcpl = plist(H5P_LINK_CREATE);
    h5_ok(H5Pset_char_encoding(lcpl, H5T_CSET_UTF8), "utf-8 name");
    {
      H5Id ds = h5_ok(
          H5Dcreate2(w.file(), "a/\xc3\xa9t\xc3\xa9", H5T_IEEE_F32LE, space_of({1}), lcpl, H5P_DEFAULT, H5P_DEFAULT),
          H5Dclose, "utf-8 dataset");
      const float v = 1.5f;
      h5_ok(H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v), "write");
    }
    w.expect("a/\xc3\xa9t\xc3\xa9", Bytes{0, 0, 0xc0, 0x3f});
    CHECK(storage_of(w.file(), "a") == H5G_STORAGE_TYPE_COMPACT);
    check_walks_agree(w.path(), Expect::library, &w.close());
  }
  {  // shared object header messages need superblock version 2
    H5Id fcpl = plist(H5P_FILE_CREATE);
    h5_ok(H5Pset_shared_mesg_nindexes(fcpl, 1), "shared messages");
    h5_ok(H5Pset_shared_mesg_index(fcpl, 0, H5O_SHMESG_ALL_FLAG, 16), "shared message index");
    H5Writer w(dir / "shared_messages.h5", fcpl);
    little_tree(w);
    w.numbers<float>("a/x2", H5T_IEEE_F32LE, {2, 2}, floats(4, 5));
    check_walks_agree(w.path(), Expect::library, &w.close());
  }
  for (const auto& [offsets, lengths] : {std::pair{4, 4}, std::pair{8, 4}, std::pair{4, 8}}) {
    H5Id fcpl = plist(H5P_FILE_CREATE);
    h5_ok(H5Pset_sizes(fcpl, offsets, lengths), "address sizes");
    H5Writer w(dir / "sizes.h5", fcpl);
    little_tree(w);
    INFO("offsets " << offsets << ", lengths " << lengths);
    check_walks_agree(w.path(), Expect::library, &w.close());
  }
}

TEST_CASE("native walk: files both walks refuse, with the same first problem") {
  TempDir dir;
  {  // a dataset under two names: its data would be written twice
    H5Writer w(dir / "dataset_twice.h5");
    little_tree(w);
    w.group("b");
    h5_ok(H5Lcreate_hard(w.file(), "a/x", w.file(), "b/x2", H5P_DEFAULT, H5P_DEFAULT), "hard link");
    w.close();
    check_walks_agree(w.path(), Expect::refused, nullptr, "overlaps the data of");
  }
  {
    H5Writer w(dir / "deep.h5");
    std::string path;
    for (int i = 0; i < 300; ++i) path += "g/";
    w.numbers<float>(path + "x", H5T_IEEE_F32LE, {1}, floats(1, 1));
    w.close();
    check_walks_agree(w.path(), Expect::refused, nullptr, "groups nest deeper than 256 levels");
  }
  {  // 80 MB declared in a file of a few KiB
    H5Writer w(dir / "unwritten.h5");
    little_tree(w);
    w.create("huge", H5T_IEEE_F32LE, space_of({20'000'000}));
    w.close();
    check_walks_agree(w.path(), Expect::refused, nullptr, "huge: declares 80000000 bytes of which none were ever");
  }
  {
    H5Writer w(dir / "external_storage.h5");
    little_tree(w);
    H5Id dcpl = plist(H5P_DATASET_CREATE);
    h5_ok(H5Pset_external(dcpl, "raw.bin", 0, 16), "external storage");
    w.create("a/outside", H5T_IEEE_F32LE, space_of({4}), dcpl);
    w.close();
    check_walks_agree(w.path(), Expect::refused, nullptr, "a/outside: external storage");
  }
  {
    H5Writer w(dir / "virtual.h5");
    little_tree(w);
    H5Id dcpl = plist(H5P_DATASET_CREATE);
    H5Id space = space_of({4});
    h5_ok(H5Pset_virtual(dcpl, space, "source.h5", "/x", space), "virtual mapping");
    w.create("a/virtual", H5T_IEEE_F32LE, space, dcpl);
    w.close();
    check_walks_agree(w.path(), Expect::refused, nullptr, "a/virtual: a virtual dataset");
  }
  {  // the sizes of the headers the native walk notes must be the library's (data_ranges.cpp)
    H5Writer w(dir / "data_over_header.h5");
    little_tree(w);
    w.close();
    patch_data_address(w.path(), "a/x", addresses_of(w.path(), "a/x").header);
    check_walks_agree(w.path(), Expect::refused, nullptr, "overlaps the object header of a/x");
    patch_data_address(w.path(), "a/x", addresses_of(w.path(), "a/b/y").header + 8);
    check_walks_agree(w.path(), Expect::refused, nullptr, "overlaps the object header of a/b/y");
    patch_data_address(w.path(), "a/x", addresses_of(w.path(), "a/b/y").data + 4);
    check_walks_agree(w.path(), Expect::refused, nullptr, "overlaps the data of");
  }
  {  // a stored address counts from the end of the user block: 0 is the superblock
    H5Id fcpl = plist(H5P_FILE_CREATE);
    h5_ok(H5Pset_userblock(fcpl, 512), "userblock");
    H5Writer w(dir / "data_over_superblock.h5", fcpl);
    little_tree(w);
    w.close();
    patch_data_address(w.path(), "a/x", 0);
    check_walks_agree(w.path(), Expect::refused, nullptr, "a/x: its data at bytes [512, 528) overlaps the superblock");
  }
  {  // a Keras 2 weight listed through an external link
    H5Writer w(dir / "keras_external.h5");
    string_attr(w.file(), "layer_names", {"dense"}, Strings::fixed);
    w.numbers<float>("dense/dense/bias:0", H5T_IEEE_F32LE, {2}, floats(2, 1));
    external_link(w.file(), "dense/dense/kernel:0");
    {
      H5Id g = h5_ok(H5Gopen2(w.file(), "dense", H5P_DEFAULT), H5Gclose, "open dense");
      string_attr(g, "weight_names", {"dense/kernel:0", "dense/bias:0"}, Strings::fixed);
    }
    w.close();
    check_walks_agree(w.path(), Expect::refused, nullptr, "dense/dense/kernel:0: is an external link");
  }
}

namespace {

// Overwrites the 8 bytes at `at` of file `path` with `value`, little-endian.
void poke(const std::string& path, std::uint64_t at, std::uint64_t value) {
  std::string bytes = read_all(path);
  REQUIRE(at + 8 <= bytes.size());
  for (std::size_t i = 0; i < 8; ++i) bytes[at + i] = static_cast<char>(value >> (8 * i));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::uint64_t peek(const std::string& path, std::uint64_t at) {
  const std::string bytes = read_all(path);
  std::uint64_t v = 0;
  for (std::size_t i = 8; i-- > 0;) v = v << 8 | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

// A Keras 2 model's skeleton: model_weights/ with one dense layer, optimizer_weights/ with the counter.
void keras2_model(H5Writer& w) {
  w.numbers<float>("model_weights/dense/dense/kernel:0", H5T_IEEE_F32LE, {2, 2}, floats(4, 1));
  w.numbers<std::int64_t>("optimizer_weights/Adam/iter:0", H5T_STD_I64LE, {}, {3});
  H5Id mw = h5_ok(H5Gopen2(w.file(), "model_weights", H5P_DEFAULT), H5Gclose, "open model_weights");
  string_attr(mw, "layer_names", {"dense"}, Strings::fixed);
  H5Id dense = h5_ok(H5Gopen2(mw, "dense", H5P_DEFAULT), H5Gclose, "open dense");
  string_attr(dense, "weight_names", {"dense/kernel:0"}, Strings::fixed);
  H5Id ow = h5_ok(H5Gopen2(w.file(), "optimizer_weights", H5P_DEFAULT), H5Gclose, "open optimizer_weights");
  string_attr(ow, "weight_names", {"Adam/iter:0"}, Strings::fixed);
}

}  // namespace

// Superblock v0 with 8-byte addresses: the root's symbol table entry caches its group's B-tree address at byte 80
// and its local heap's at 88. A B-tree node: 24 bytes, then key 0, child 0, key 1, ...; a local heap: "HEAP",
// version, 3 reserved, data size, free-list offset, data address.
// Sets `flags` on the first message of type `type` in the first chunk of dataset `dataset`'s (version 1) object
// header: 16 bytes of prefix, then per message its type u16, size u16, flags u8, 3 reserved bytes and its body.
void set_message_flags(const std::string& path, const std::string& dataset, std::uint16_t type, std::uint8_t flags) {
  const Addresses a = addresses_of(path, dataset);
  std::string bytes = read_all(path);
  const std::uint64_t header = a.base + a.header;
  const std::uint64_t end = header + 16 + (peek(path, header + 8) & 0xffffffff);
  for (std::uint64_t at = header + 16; at + 8 <= end;) {
    const std::uint64_t word = peek(path, at);
    if ((word & 0xffff) == type) {
      bytes[at + 4] = static_cast<char>(flags);
      std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
      return;
    }
    at += 8 + ((word >> 16) & 0xffff);
  }
  FAIL("no message of type " << type << " in the header of " << dataset);
}

TEST_CASE("native walk: metadata only the library checks (B-tree keys, a heap's free list) is refused alike") {
  TempDir dir;
  {  // the key after the root's first child names nothing: the library finds no name (H5Lexists is false)
    H5Writer w(dir / "btree_key.h5");
    keras2_model(w);
    w.close();
    const std::uint64_t btree = peek(w.path(), 80);
    poke(w.path(), btree + 40, 0);  // key 1: the heap's empty string at offset 0
    check_walks_agree(w.path(), Expect::refused, nullptr, "cannot read its object header");
  }
  {
    H5Writer w(dir / "heap_free_list.h5");
    keras2_model(w);
    w.close();
    const std::uint64_t heap = peek(w.path(), 88);
    poke(w.path(), heap + 16, peek(w.path(), heap + 8) + 64);  // the first free block lies past the data
    check_walks_agree(w.path(), Expect::refused, nullptr, "bad heap free list");
  }
  {  // the library takes the base address as stored: addresses past the end of file address less it are refused
    H5Writer w(dir / "base_address.h5");
    little_tree(w);
    w.close();
    poke(w.path(), 24, peek(w.path(), 40) / 2 / 8 * 8);
    check_walks_agree(w.path(), Expect::refused, nullptr, "");
  }
  {  // a layout message (a class never shared) flagged shareable (0x40)
    H5Writer w(dir / "shareable_flag.h5");
    little_tree(w);
    w.close();
    set_message_flags(w.path(), "a/x", 0x0008, 0x40);
    check_walks_agree(w.path(), Expect::refused, nullptr, "a/x: cannot read its object header");
  }
}

TEST_CASE("native walk: paged file space, which needs a newer superblock, is left to the library") {
  TempDir dir;
  H5Id fcpl = plist(H5P_FILE_CREATE);
  h5_ok(H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_PAGE, 1, 1), "paged file space");
  H5Writer w(dir / "paged.h5", fcpl);
  little_tree(w);
  check_walks_agree(w.path(), Expect::library, &w.close());
}
