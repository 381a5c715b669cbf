#pragma once
// NumPy `.npz` archives (numpy.savez, numpy.savez_compressed; numpy/lib/_npyio_impl.py and numpy/lib/format.py):
// a zip archive (layout in pytorch/zip_layout.hpp) whose members are `.npy` files, one array each, named by the
// array's key plus ".npy" (JAX users' `params/Dense_0/kernel.npy`). savez stores the members, savez_compressed
// deflates them. One `.npy` member, all integers little-endian:
//
//   6 bytes    "\x93NUMPY"
//   u8, u8     format version: 1.0 (u16 header length follows), 2.0 or 3.0 (u32; 3.0 allows UTF-8 in the header)
//   u16 / u32  header length H
//   H bytes    a Python dict literal, padded with spaces and ended by '\n' so the data start on a 64-byte boundary:
//              {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
//   data       product(shape) elements, C order (Fortran order when fortran_order is True), no padding
//
// The reader parses that dict itself, strictly: exactly the three keys, descr one of the little-endian (or
// one-byte '|') number and bool types wavg knows (complex64 '<c8' and complex128 '<c16' among them, carried as
// their parts: tensor.hpp), fortran_order False (True only for 0-d and 1-d arrays, where it changes nothing), shape
// a tuple of non-negative integers; object, structured, string, long double ('<f16', '<c32'), big-endian and
// void ('<V2': ml_dtypes' bfloat16) arrays are refused, as are members that are not `.npy` files and data shorter
// or longer than the header says. Stored members are served by view() from the mapping; deflated ones are
// inflated through libzip as the engine asks for them, front to back (a step back reopens the member).
// The writer stores every array as a version 1.0 member (2.0 when the header needs it), headers and data on
// 64-byte boundaries, through the torch zip writer; bfloat16 has no numpy dtype and is refused. The format has no
// place for metadata: `.npz` outputs carry no provenance.

#include <memory>
#include <string>
#include <vector>

#include "listed_reader.hpp"
#include "wavg/format.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg {

struct NpyHeader {
  TensorInfo info;               // name left empty
  std::uint64_t data_begin = 0;  // bytes from the start of the member to its data
};

// Returns the total length of a `.npy` header (magic to data) from its first bytes, which must hold at least 12
// (or the member's whole size, when shorter), refusing a bad magic or version. `what` names the member in errors.
std::uint64_t npy_header_length(const std::string& file, const std::string& what, const unsigned char* bytes,
                                std::uint64_t available);
// Parses a whole `.npy` header (npy_header_length bytes).
NpyHeader parse_npy_header(const std::string& file, const std::string& what, const unsigned char* bytes,
                           std::uint64_t length);
// Returns numpy's header for an array of `info`'s dtype and shape, its length a multiple of 64.
std::string npy_header(const TensorInfo& info);

class NpzReader final : public ListedReader {
 public:
  explicit NpzReader(std::string path);
  ~NpzReader() override;

  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override;
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void release(std::size_t index, std::uint64_t offset, std::uint64_t count) override;
  void prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) override;

 private:
  // Lists the members and parses their .npy headers (the constructor's work, which closes libzip on an error).
  void list_members();
  struct Member;
  // Inflates member `m` up to element `offset` of its data, reopening it when that lies behind.
  void seek_deflated(Member& m, std::uint64_t offset);

  MappedFile m_file;
  std::vector<Member> m_members;  // per tensor
  void* m_zip = nullptr;          // libzip's handle, for deflated members
};

// Tells whether a file is a zip archive whose first member's name ends in ".npy".
bool looks_like_npz(const SniffInput& input);

std::unique_ptr<Writer> create_npz_writer(const std::string& tmp_path, const std::string& display_path,
                                          const OutputSpec& spec);

}  // namespace wavg
