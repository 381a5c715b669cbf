#pragma once
// MXNet NDArray list files: `.params` written by Gluon's save_parameters, by Module's save_checkpoint
// (`prefix-0010.params`) and by mx.nd.save (apache/mxnet src/ndarray/ndarray.cc, NDArray::Save / Load / LegacyLoad;
// include/mxnet/tuple.h, Tuple::Save; include/mxnet/base.h, Context::Save; mshadow/base.h, TypeFlag).
//
// Hand-written: MXNet is its own only reader (no library reads the format without the whole framework, which is
// not packaged for Debian). On disk, all integers little-endian (dmlc::Stream writes the host's bytes; every file
// in the wild comes from x86 or ARM):
//
//   u64 0x112                 kMXAPINDArrayListMagic
//   u64 reserved              0
//   u64 N                     number of arrays, then N arrays, each in one of four encodings told by its first u32:
//     V3  u32 0xF993FACA      (numpy shape semantics) i32 stype, i32 ndim (-1: no array; 0: a scalar),
//                             i64 dims[ndim], context, i32 dtype, data
//     V2  u32 0xF993FAC9      i32 stype (0 dense, 1 row_sparse, 2 csr: sparse ones are refused), i32 ndim
//                             (0: no array), i64 dims[ndim], context, i32 dtype, data
//     V1  u32 0xF993FAC8      i32 ndim (0: no array), i64 dims[ndim], context, i32 dtype, data
//     legacy                  the first u32 is ndim (0: no array), u32 dims[ndim], context, i32 dtype, data
//   context                   i32 device type (1 cpu, 2 gpu, 3 cpu_pinned, 5 cpu_shared), i32 device id; the data
//                             were copied to the CPU before saving, so the device does not matter here
//   dtype                     mshadow TypeFlag: 0 float32, 1 float64, 2 float16, 3 uint8, 4 int32, 5 int8,
//                             6 int64, 7 bool, 8 int16, 9 uint16, 10 uint32, 11 uint64, 12 bfloat16
//   data                      product(dims) elements, row-major, no padding
//   u64 K                     number of names: 0 (a plain list, named "0", "1", ... here) or N
//   K x (u64 length, bytes)   the names, in the arrays' order: "arg:NAME"/"aux:NAME" from Module, bare from Gluon
//
// The reader maps the file (MappedFile) and checks every count and length against the bytes left before using it;
// it refuses an array that holds nothing (ndim 0 outside V3), sparse storage, unknown dtypes, duplicate names and
// trailing bytes, each by name. Arrays are served by view() straight from the mapping when their data are aligned.
// The writer writes the V2 encoding (dense, cpu context 1/0) with the output's names in order, which mx.nd.load and
// Gluon's load_parameters read; when input 1 holds only V3 arrays (saved in numpy semantics, loaded by npx.load,
// which refuses V2) it writes V3, which can also hold scalars. When input 1 was a plain list and the names are its
// indices, it writes no names.
// The format has no place for metadata: MXNet outputs carry no provenance.

#include <memory>
#include <string>
#include <vector>

#include "mapped_tensors.hpp"
#include "wavg/format.hpp"

namespace wavg {

class MxnetReader final : public MappedTensorsReader {
 public:
  explicit MxnetReader(std::string path);

  // Tells whether the file lists names (false: a plain list, its arrays named by index).
  bool has_names() const { return m_has_names; }
  // Tells whether every array is in the V3 encoding (saved in numpy semantics).
  bool numpy_semantics() const { return m_numpy_semantics; }

 private:
  bool m_has_names = false;
  bool m_numpy_semantics = false;
};

// Tells whether a file starts with the NDArray list magic 0x112 and a zero reserved word.
bool looks_like_mxnet(const SniffInput& input);

std::unique_ptr<Writer> create_mxnet_writer(const std::string& tmp_path, const std::string& display_path,
                                            const OutputSpec& spec);

}  // namespace wavg
