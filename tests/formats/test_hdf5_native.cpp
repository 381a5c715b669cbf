// wavg's native walk of HDF5's structure (formats/hdf5/native_index.*) against the HDF5 library's walk, the
// independent reference (support/h5native_diff.hpp): files written here through the HDF5 C API, each checked for
// the same structure() byte for byte, the native path taken where the file keeps to what it knows, and every
// tensor's bytes equal through both readers and to what was written. This file: what the native walk reads itself
// (superblock v0/v1, v1 object headers, old-style groups, contiguous data) and the datasets it leaves to the
// library one at a time. test_hdf5_native_layouts.cpp: links, whole-file fallbacks, refusals, Keras layouts.

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "support/h5corpus.hpp"
#include "support/h5native_diff.hpp"
#include "support/temp_dir.hpp"

using namespace wavg::test;

namespace {

using I64 = std::numeric_limits<std::int64_t>;

// Returns the bytes of 16-bit values (float16 / bfloat16 bit patterns) in little-endian order.
Bytes halves(const std::vector<std::uint16_t>& bits) {
  Bytes out;
  for (std::uint16_t b : bits) {
    out.push_back(static_cast<unsigned char>(b & 0xff));
    out.push_back(static_cast<unsigned char>(b >> 8));
  }
  return out;
}

// Writes one small float32 dataset per name under `group`, each [2] with values from its index.
void small_datasets(H5Writer& w, const std::string& group, const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < names.size(); ++i)
    w.numbers<float>(group + names[i], H5T_IEEE_F32LE, {2}, floats(2, static_cast<int>(i)));
}

// The names of `n` datasets in an order unlike their byte order ("w1200" before "w13"), so the B-tree's order is
// not the order of creation.
std::vector<std::string> shuffled_names(std::size_t n) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < n; ++i) {
    std::string name(1, 'w');  // appended, not "w" + ...: GCC 12 warns wrongly (-Wrestrict) on the inlined sum
    name += std::to_string((i * 7919) % n);
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace

TEST_CASE("native walk: nested groups of every numeric type, scalars, empty and null datasets, strings") {
  TempDir dir;
  H5Writer w(dir / "nested.h5");
  w.numbers<float>("a/f32", H5T_IEEE_F32LE, {2, 3}, floats(6, 1));
  w.numbers<double>("a/b/f64", H5T_IEEE_F64LE, {4}, {1.5, -2.25, 1e300, 0});
  w.numbers<std::int8_t>("a/b/c/i8", H5T_STD_I8LE, {3}, {-128, 0, 127});
  w.numbers<std::int16_t>("a/b/c/i16", H5T_STD_I16LE, {2}, {-32768, 32767});
  w.numbers<std::int32_t>("a/b/c/i32", H5T_STD_I32LE, {3}, {-2147483647 - 1, 7, 2147483647});
  w.numbers<std::int64_t>("a/b/i64", H5T_STD_I64LE, {2}, {I64::min(), I64::max()});
  w.numbers<std::uint8_t>("u/u8", H5T_STD_U8LE, {4}, {0, 1, 128, 255});
  w.numbers<std::uint16_t>("u/u16", H5T_STD_U16LE, {2}, {0, 65535});
  w.numbers<std::uint32_t>("u/u32", H5T_STD_U32LE, {2}, {1, 4294967295u});
  w.numbers<std::uint64_t>("u/u64", H5T_STD_U64LE, {2, 1}, {1, 18446744073709551615ull});
  w.raw("h/f16", half_type(false), {4}, halves({0x3c00, 0xc000, 0x7bff, 0x0001}));
  w.raw("h/bf16", half_type(true), {2, 2}, halves({0x3f80, 0xc040, 0x7f7f, 0x0001}));
  w.numbers<float>("scalars/f32", H5T_IEEE_F32LE, {}, {3.5f});
  w.numbers<std::int64_t>("scalars/i64", H5T_STD_I64LE, {}, {-7});
  w.numbers<float>("a/rank5", H5T_IEEE_F32LE, {1, 2, 1, 3, 1}, floats(6, 2));
  w.numbers<float>("empty/f32", H5T_IEEE_F32LE, {0}, {});
  w.numbers<double>("empty/f64x0", H5T_IEEE_F64LE, {3, 0}, {});
  w.create("empty/null", H5T_IEEE_F32LE, h5_ok(H5Screate(H5S_NULL), H5Sclose, "null space"));
  {  // a dataspace that states its maximum dimensions (equal to the current ones: still contiguous)
    const hsize_t dims[2] = {2, 2};
    w.create("a/maxdims", H5T_IEEE_F32LE, h5_ok(H5Screate_simple(2, dims, dims), H5Sclose, "maxdims space"));
    const std::vector<float> v = floats(4, 3);
    H5Id ds = h5_ok(H5Dopen2(w.file(), "a/maxdims", H5P_DEFAULT), H5Dclose, "open a/maxdims");
    h5_ok(H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "write a/maxdims");
    w.expect("a/maxdims", Bytes(reinterpret_cast<const unsigned char*>(v.data()),
                                reinterpret_cast<const unsigned char*>(v.data() + 4)));
  }
  const std::string text = "helloworld";
  w.write("text/fixed", string_type(Strings::fixed, 5), string_type(Strings::fixed, 5), {2},
          Bytes(text.begin(), text.end()));
  {
    const char* lines[2] = {"one", "two words"};
    H5Id type = string_type(Strings::variable, 0);
    w.create("text/vlen", type, space_of({2}));
    H5Id ds = h5_ok(H5Dopen2(w.file(), "text/vlen", H5P_DEFAULT), H5Dclose, "open text/vlen");
    h5_ok(H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, lines), "write text/vlen");
    string_attr(ds, "about", {"a string dataset"}, Strings::variable, true);
  }
  w.group("a/empty");
  {
    H5Id f32 = h5_ok(H5Dopen2(w.file(), "a/f32", H5P_DEFAULT), H5Dclose, "open a/f32");
    string_attr(f32, "units", {"m", "s"}, Strings::fixed);
    H5Id a = h5_ok(H5Gopen2(w.file(), "a", H5P_DEFAULT), H5Gclose, "open a");
    string_attr(a, "about", {"group a"}, Strings::variable, true);
  }
  string_attr(w.file(), "note", {"written by test_hdf5_native"}, Strings::variable, true);
  string_attr(w.file(), "tags", {"x", "yz"}, Strings::fixed);
  double_attr(w.file(), "epoch", {}, {3});
  double_attr(w.file(), "history", {3}, {1, 2, 3});
  check_walks_agree(w.path(), Expect::native, &w.close());
}

TEST_CASE("native walk: datasets it leaves to the library one by one, beside ones it reads itself") {
  TempDir dir;
  H5Writer w(dir / "per_dataset.h5");
  w.numbers<float>("plain", H5T_IEEE_F32LE, {3}, floats(3, 1));
  w.numbers<float>("be/f32", H5T_IEEE_F32BE, {2, 2}, floats(4, 2));
  w.numbers<double>("be/f64", H5T_IEEE_F64BE, {2}, {0.5, -3});
  w.numbers<std::int32_t>("be/i32", H5T_STD_I32BE, {2}, {-5, 123456});
  {
    H5Id dcpl = plist(H5P_DATASET_CREATE);
    const hsize_t chunk[2] = {2, 2};
    h5_ok(H5Pset_chunk(dcpl, 2, chunk), "chunk");
    w.numbers<float>("chunked/plain", H5T_IEEE_F32LE, {4, 6}, floats(24, 3), dcpl);
    if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
      h5_ok(H5Pset_shuffle(dcpl), "shuffle");
      h5_ok(H5Pset_deflate(dcpl, 6), "deflate");
      w.numbers<float>("chunked/deflate", H5T_IEEE_F32LE, {4, 6}, floats(24, 4), dcpl);
    }
  }
  {
    H5Id dcpl = plist(H5P_DATASET_CREATE);
    h5_ok(H5Pset_layout(dcpl, H5D_COMPACT), "compact");
    w.numbers<std::int16_t>("compact", H5T_STD_I16LE, {3}, {1, -2, 3}, dcpl);
  }
  {  // never written: late allocation reads the fill value, default zero or the one set
    const std::vector<float> fill(5, 2.5f), zeros(3, 0.0f);
    H5Id dcpl = plist(H5P_DATASET_CREATE);
    h5_ok(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_LATE), "late");
    w.create("unwritten/zero", H5T_IEEE_F32LE, space_of({3}), dcpl);
    w.expect("unwritten/zero", Bytes(12, 0));
    h5_ok(H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, fill.data()), "fill value");
    w.create("unwritten/fill", H5T_IEEE_F32LE, space_of({5}), dcpl);
    w.expect("unwritten/fill", Bytes(reinterpret_cast<const unsigned char*>(fill.data()),
                                     reinterpret_cast<const unsigned char*>(fill.data() + 5)));
    h5_ok(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY), "early");
    h5_ok(H5Pset_fill_time(dcpl, H5D_FILL_TIME_ALLOC), "fill at allocation");
    w.create("unwritten/early", H5T_IEEE_F32LE, space_of({5}), dcpl);  // allocated and filled, never written
    w.expect("unwritten/early", Bytes(reinterpret_cast<const unsigned char*>(fill.data()),
                                      reinterpret_cast<const unsigned char*>(fill.data() + 5)));
  }
  {
    H5Id named = h5_ok(H5Tcopy(H5T_IEEE_F32LE), H5Tclose, "copy");
    w.group("types");
    h5_ok(H5Tcommit2(w.file(), "types/f32", named, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "commit");
    w.numbers<float>("committed", named, {2}, floats(2, 5));
  }
  {  // numbers HDF5 must convert: 12 bits of precision in 16, unnormalised mantissa
    H5Id i12 = h5_ok(H5Tcopy(H5T_STD_I16LE), H5Tclose, "copy");
    h5_ok(H5Tset_precision(i12, 12), "precision");
    w.numbers<std::int16_t>("odd/i12", i12, {3}, {-2048, 5, 2047});
    H5Id norm = h5_ok(H5Tcopy(H5T_IEEE_F32LE), H5Tclose, "copy");
    h5_ok(H5Tset_norm(norm, H5T_NORM_NONE), "norm");
    w.numbers<float>("odd/f32_unnormalised", norm, {2}, {0.5f, 2.0f});
    w.expect("odd/f32_unnormalised", std::nullopt);  // only compared between the readers
  }
  {  // h5py's bool (an int8 enum) is a tensor; other enums, records, opaque bytes and sequences are not
    H5Id boolean = h5_ok(H5Tenum_create(H5T_NATIVE_INT8), H5Tclose, "enum");
    const signed char no = 0, yes = 1, maybe = 2;
    H5Tenum_insert(boolean, "FALSE", &no);
    H5Tenum_insert(boolean, "TRUE", &yes);
    w.raw("types/bool", boolean, {4}, {0, 1, 1, 0});
    H5Tenum_insert(boolean, "MAYBE", &maybe);
    w.write("types/enum3", boolean, boolean, {2}, {0, 2});
    H5Id pair = h5_ok(H5Tcreate(H5T_COMPOUND, 8), H5Tclose, "compound");
    H5Tinsert(pair, "a", 0, H5T_IEEE_F32LE);
    H5Tinsert(pair, "b", 4, H5T_STD_I32LE);
    w.write("types/compound", pair, pair, {1}, Bytes(8, 1));
    H5Id opaque = h5_ok(H5Tcreate(H5T_OPAQUE, 4), H5Tclose, "opaque");
    w.write("types/opaque", opaque, opaque, {1}, Bytes(4, 2));
    H5Id seq = h5_ok(H5Tvlen_create(H5T_STD_I32LE), H5Tclose, "vlen");
    w.create("types/sequence", seq, space_of({2}));
  }
  check_walks_agree(w.path(), Expect::native, &w.close());
}

TEST_CASE("native walk: numbers without a wavg dtype are refused by name, never skipped") {
  TempDir dir;
  const auto refused = [&](const std::string& file, H5Id type, Bytes bytes, const std::string& refusal) {
    H5Writer w(dir / file);
    small_datasets(w, "", {"plain"});
    w.write("odd", type, type, {1}, std::move(bytes));
    w.close();
    check_walks_agree(w.path(), Expect::refused, nullptr, refusal);
  };
  H5Id bias = h5_ok(H5Tcopy(H5T_IEEE_F32LE), H5Tclose, "copy");
  h5_ok(H5Tset_ebias(bias, 100), "bias");
  refused("bias100.h5", std::move(bias), Bytes(4, 0x40),
          "odd: a 32-bit float type wavg does not read (8-bit exponent, bias 100, 23-bit mantissa)");
  H5Id i24 = h5_ok(H5Tcopy(H5T_STD_I32LE), H5Tclose, "copy");
  h5_ok(H5Tset_size(i24, 3), "size 3");
  refused("i24.h5", std::move(i24), Bytes(3, 1), "odd: a 24-bit integer type wavg does not read");
  const hsize_t three = 3;
  refused("array.h5", h5_ok(H5Tarray_create2(H5T_IEEE_F32LE, 1, &three), H5Tclose, "array"), Bytes(12, 0),
          "odd: an array of numbers per element (96-bit)");
  // h5py's complex128 is {r, i}, read (tests/cli/hdf5_complex.sh); two floats under other names are not.
  H5Id pair = h5_ok(H5Tcreate(H5T_COMPOUND, 16), H5Tclose, "compound");
  H5Tinsert(pair, "x", 0, H5T_IEEE_F64LE);
  H5Tinsert(pair, "y", 8, H5T_IEEE_F64LE);
  refused("pair.h5", std::move(pair), Bytes(16, 0),
          "odd: a compound of two floats (128-bit) that is not h5py's complex type");
}

TEST_CASE("native walk: B-trees of several levels, small and large symbol-table K, names in byte order") {
  TempDir dir;
  {  // 3000 entries in one group: with the default K (16) about 100 symbol nodes under a B-tree of 2 or 3 levels
    H5Writer w(dir / "many.h5");
    small_datasets(w, "big/", shuffled_names(3000));
    small_datasets(w, "small/", {"c", "a", "b"});
    check_walks_agree(w.path(), Expect::native, &w.close());
  }
  {  // K = 1 for both: two entries a symbol node, two children a B-tree node, so many levels for 200 entries
    H5Id fcpl = plist(H5P_FILE_CREATE);
    h5_ok(H5Pset_sym_k(fcpl, 1, 1), "sym_k");
    H5Writer w(dir / "k1.h5", fcpl);
    small_datasets(w, "g/", shuffled_names(200));
    small_datasets(w, "", {"top"});
    check_walks_agree(w.path(), Expect::native, &w.close());
  }
  {
    H5Id fcpl = plist(H5P_FILE_CREATE);
    h5_ok(H5Pset_sym_k(fcpl, 64, 32), "sym_k");
    H5Writer w(dir / "k64.h5", fcpl);
    small_datasets(w, "g/", shuffled_names(500));
    check_walks_agree(w.path(), Expect::native, &w.close());
  }
  {  // byte order: upper case before '_' before lower case; '.' and '-' before digits; UTF-8 bytes last
    H5Writer w(dir / "names.h5");
    small_datasets(w, "",
                   {"a", "B", "a.b", "a_b", "a-b", "A", "_x", "Z9", "a0", "a10", "a9", "a b", "x%y",
                    "\xc3\xa9t\xc3\xa9", std::string(200, 'n'), "dense/kernel:0"});
    check_walks_agree(w.path(), Expect::native, &w.close());
  }
}

TEST_CASE("native walk: user blocks, superblock v1, object headers with and without times, continuation chunks") {
  TempDir dir;
  for (hsize_t userblock : {512, 1024}) {
    H5Id fcpl = plist(H5P_FILE_CREATE);
    h5_ok(H5Pset_userblock(fcpl, userblock), "userblock");
    H5Writer w(dir / ("userblock" + std::to_string(userblock) + ".h5"), fcpl);
    w.numbers<float>("a/x", H5T_IEEE_F32LE, {3, 2}, floats(6, 1));
    w.numbers<std::int64_t>("b", H5T_STD_I64LE, {}, {42});
    check_walks_agree(w.path(), Expect::native, &w.close());
  }
  {  // a non-default chunk B-tree K makes the superblock version 1
    H5Id fcpl = plist(H5P_FILE_CREATE);
    h5_ok(H5Pset_istore_k(fcpl, 64), "istore_k");
    H5Writer w(dir / "superblock_v1.h5", fcpl);
    w.numbers<float>("g/x", H5T_IEEE_F32LE, {5}, floats(5, 2));
    H5Id dcpl = plist(H5P_DATASET_CREATE);
    const hsize_t chunk = 2;
    h5_ok(H5Pset_chunk(dcpl, 1, &chunk), "chunk");
    w.numbers<float>("g/chunked", H5T_IEEE_F32LE, {5}, floats(5, 3), dcpl);
    H5F_info2_t info{};
    h5_ok(H5Fget_info2(w.file(), &info), "file info");
    CHECK(info.super.version == 1);
    check_walks_agree(w.path(), Expect::native, &w.close());
  }
  {
    H5Writer w(dir / "times.h5");
    H5Id untimed = plist(H5P_DATASET_CREATE);
    h5_ok(H5Pset_obj_track_times(untimed, 0), "times off");
    w.numbers<float>("timed", H5T_IEEE_F32LE, {2}, floats(2, 1));
    w.numbers<float>("untimed", H5T_IEEE_F32LE, {2}, floats(2, 2), untimed);
    H5Id gcpl = plist(H5P_GROUP_CREATE);
    h5_ok(H5Pset_obj_track_times(gcpl, 0), "times off");
    w.group("quiet", gcpl);
    w.numbers<float>("quiet/x", H5T_IEEE_F32LE, {2}, floats(2, 3), untimed);
    check_walks_agree(w.path(), Expect::native, &w.close());
  }
  {  // 40 attributes of 64 bytes outgrow a header's first chunk: the rest lies in continuation blocks
    H5Writer w(dir / "attributes.h5");
    w.numbers<float>("g/d", H5T_IEEE_F32LE, {4}, floats(4, 1));
    w.numbers<float>("g/e", H5T_IEEE_F32LE, {4}, floats(4, 2));
    {
      H5Id d = h5_ok(H5Dopen2(w.file(), "g/d", H5P_DEFAULT), H5Dclose, "open g/d");
      H5Id e = h5_ok(H5Dopen2(w.file(), "g/e", H5P_DEFAULT), H5Dclose, "open g/e");
      H5Id g = h5_ok(H5Gopen2(w.file(), "g", H5P_DEFAULT), H5Gclose, "open g");
      for (int i = 0; i < 40; ++i) {
        const std::string n = "attr" + std::to_string(i);
        double_attr(d, n, {8}, std::vector<double>(8, i));
        double_attr(g, n, {8}, std::vector<double>(8, -i));
        double_attr(w.file(), n, {}, {i * 0.5});  // root scalars: metadata
        if (i < 10) double_attr(e, n, {8}, std::vector<double>(8, i));
      }
      // Deleted attributes leave null messages (gaps) in e's header.
      for (int i = 0; i < 10; i += 2) h5_ok(H5Adelete(e, ("attr" + std::to_string(i)).c_str()), "delete");
      H5O_info_t info{};
      h5_ok(H5Oget_info2(d, &info, H5O_INFO_HDR), "header info");
      CHECK(info.hdr.nchunks > 1);
    }
    check_walks_agree(w.path(), Expect::native, &w.close());
  }
}

TEST_CASE("native walk: files edited after they were written (links deleted, renamed, data appended)") {
  TempDir dir;
  {  // removals shrink symbol nodes and the B-tree (to nothing, in one group) and free names in the local heap
    H5Writer w(dir / "edited.h5");
    const std::vector<std::string> names = shuffled_names(120);
    small_datasets(w, "g/", names);
    small_datasets(w, "gone/", {"p", "q"});
    for (std::size_t i = 0; i < names.size(); ++i)
      if (i % 3 != 0 || i > 90) h5_ok(H5Ldelete(w.file(), ("g/" + names[i]).c_str(), H5P_DEFAULT), "delete");
    h5_ok(H5Ldelete(w.file(), "gone/p", H5P_DEFAULT), "delete");
    h5_ok(H5Ldelete(w.file(), "gone/q", H5P_DEFAULT), "delete");
    h5_ok(
        H5Lmove(w.file(), ("g/" + names[0]).c_str(), w.file(), "g/renamed_to_a_longer_name", H5P_DEFAULT, H5P_DEFAULT),
        "rename");
    Written kept;
    for (const auto& [name, bytes] : w.close())
      if (name.rfind("gone/", 0) != 0) kept[name == "g/" + names[0] ? "g/renamed_to_a_longer_name" : name] = bytes;
    for (std::size_t i = 0; i < names.size(); ++i)
      if (i % 3 != 0 || i > 90) kept.erase("g/" + names[i]);
    check_walks_agree(dir / "edited.h5", Expect::native, &kept);
  }
  {  // reopened: the second session's metadata lies after the first's data, headers grow continuation chunks
    std::string path;
    Written written;
    {
      H5Writer w(dir / "appended.h5");
      small_datasets(w, "a/", {"x", "y"});
      path = w.path();
      written = w.close();
    }
    H5Id f = h5_ok(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose, "reopen");
    {
      H5Id x = h5_ok(H5Dopen2(f, "a/x", H5P_DEFAULT), H5Dclose, "open a/x");
      for (int i = 0; i < 30; ++i) double_attr(x, "late" + std::to_string(i), {4}, std::vector<double>(4, i));
      H5Id lcpl = plist(H5P_LINK_CREATE);
      h5_ok(H5Pset_create_intermediate_group(lcpl, 1), "intermediate groups");
      H5Id ds = h5_ok(H5Dcreate2(f, "b/c/z", H5T_IEEE_F64LE, space_of({3}), lcpl, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
                      "create b/c/z");
      const std::vector<double> v{1, 2, 3};
      h5_ok(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "write b/c/z");
      written["b/c/z"] =
          Bytes(reinterpret_cast<const unsigned char*>(v.data()), reinterpret_cast<const unsigned char*>(v.data() + 3));
    }
    h5_ok(H5Fclose(f), "close");
    check_walks_agree(path, Expect::native, &written);
  }
  {  // every allocation aligned to 4 KiB: sparse metadata far apart
    H5Id fapl = plist(H5P_FILE_ACCESS);
    h5_ok(H5Pset_alignment(fapl, 1, 4096), "alignment");
    H5Writer w(dir / "aligned.h5", H5P_DEFAULT, fapl);
    small_datasets(w, "a/", {"x", "y"});
    w.numbers<float>("z", H5T_IEEE_F32LE, {64}, floats(64, 7));
    check_walks_agree(w.path(), Expect::native, &w.close());
  }
}
