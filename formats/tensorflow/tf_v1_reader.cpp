// TF1's V1 checkpoints, as tf.compat.v1.train.Saver(write_version=SaverDef.V1) writes them and TensorFlow's
// tensor_slice_reader reads them (tensorflow/core/util/tensor_slice_writer.h, saved_tensor_slice.proto): the 2016
// TF-Slim model releases are in this format.
//
// One file, a LevelDB-format table (the same table layer as a V2 .index: tf_table.hpp) whose values are
// SavedTensorSlices messages:
//
//   key ""                     meta: SavedTensorSliceMeta { tensor: SavedSliceMeta { name, shape, type (a DataType
//                              number), slice: the TensorSliceProtos stored } per variable, versions }
//   key (name, slice) encoded  data: SavedSlice { name, slice, data: TensorProto }, the slice's values in the
//                              TensorProto field of their type (float_val, double_val, int_val for 8 to 32-bit
//                              integers, int64_val, bool_val, half_val holding half and bfloat16 bits, uint32_val,
//                              uint64_val) or as little-endian bytes in tensor_content
//
// wavg reads whole tensors: a variable saved as one slice covering it (every extent without a length), which is
// what Saver writes for a variable that is not partitioned. A partitioned variable, an unknown-rank shape, string
// tensors and value counts that do not match the shape are refused by name. The values are decoded into memory
// when the file opens (V1 files are small: the format stores every value as a protobuf field); the output of a
// merge is a V2 checkpoint (TensorflowReader's format, which TensorFlow 1.x and 2.x both read).

#include <cstdio>
#include <cstring>
#include <map>

#include "formats/tensorflow/tensor_bundle.pb.h"
#include "tensorflow/tensorflow.hpp"
#include "tensorflow/tf_dtype.hpp"
#include "tensorflow/tf_table.hpp"
#include "wavg/error.hpp"
#include "wavg/mapped_file.hpp"

namespace wavg {

namespace {

// Tells whether `slice` covers a tensor of rank `rank` whole: no extent has a length (an empty slice: a scalar).
bool whole(const tfproto::TensorSliceProto& slice, int rank) {
  if (slice.extent_size() != 0 && slice.extent_size() != rank) return false;
  for (const auto& e : slice.extent())
    if (e.has_length_case() != tfproto::TensorSliceProto::Extent::HAS_LENGTH_NOT_SET || e.start() != 0) return false;
  return true;
}

// Copies `values` (a repeated field) into `out` as `count` elements of type T, or returns false when the count
// differs.
template <typename T, typename Field>
bool copy_values(const Field& values, std::uint64_t count, std::vector<unsigned char>& out) {
  if (static_cast<std::uint64_t>(values.size()) != count) return false;
  out.resize(count * sizeof(T));
  for (std::uint64_t i = 0; i < count; ++i) {
    const T v = static_cast<T>(values.Get(static_cast<int>(i)));
    std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
  }
  return true;
}

// Decodes a slice's TensorProto into `count` elements of `dtype`, little-endian; false when they do not fit.
bool decode(const tfproto::TensorProto& p, DType dtype, std::uint64_t count, std::vector<unsigned char>& out) {
  if (!p.tensor_content().empty()) {
    if (p.tensor_content().size() != count * dtype_size(dtype)) return false;
    out.assign(p.tensor_content().begin(), p.tensor_content().end());
    return true;
  }
  switch (dtype) {
    case DType::f32: return copy_values<float>(p.float_val(), count, out);
    case DType::f64: return copy_values<double>(p.double_val(), count, out);
    case DType::f16:
    case DType::bf16: return copy_values<std::uint16_t>(p.half_val(), count, out);
    case DType::i8: return copy_values<std::int8_t>(p.int_val(), count, out);
    case DType::i16: return copy_values<std::int16_t>(p.int_val(), count, out);
    case DType::i32: return copy_values<std::int32_t>(p.int_val(), count, out);
    case DType::u8: return copy_values<std::uint8_t>(p.int_val(), count, out);
    case DType::u16: return copy_values<std::uint16_t>(p.int_val(), count, out);
    case DType::i64: return copy_values<std::int64_t>(p.int64_val(), count, out);
    case DType::u32: return copy_values<std::uint32_t>(p.uint32_val(), count, out);
    case DType::u64: return copy_values<std::uint64_t>(p.uint64_val(), count, out);
    case DType::boolean: return copy_values<std::uint8_t>(p.bool_val(), count, out);
  }
  return false;
}

class TfV1Reader final : public ListedReader {
 public:
  explicit TfV1Reader(std::string path) : ListedReader(std::move(path), FormatId::tensorflow) {
    m_layout = "TF1 V1 checkpoint (Saver write_version=V1)";
    const MappedFile file(m_path);
    bool first = true;
    tftable::read_table(file.data(), file.size(), m_path, [&](const std::string& key, const std::string& value) {
      tfproto::SavedTensorSlices s;
      if (!s.ParseFromString(value))
        fail(m_path, "a LevelDB table whose entries are not TensorFlow V1 checkpoint slices (SavedTensorSlices)");
      if (first != key.empty()) fail(m_path, "a V1 checkpoint's first entry must be its table of contents");
      if (first)
        read_meta(s.meta());
      else
        add_slice(s.data());
      first = false;
    });
    if (first) fail(m_path, "an empty LevelDB table, not a TensorFlow V1 checkpoint");
    for (std::size_t i = 0; i < m_tensors.size(); ++i)
      if (!m_stored[i] && m_tensors[i].count() > 0)
        fail(m_path, "tensor " + m_tensors[i].name + ": listed in the table of contents, but no entry holds it");
    set_tensorflow_roles(m_tensors, nullptr, m_path);  // TF1's slot and counter names (no object graph in V1)
  }

  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override {
    const std::size_t elem = dtype_size(m_tensors[index].dtype);
    WAVG_ASSERT(offset + count <= m_tensors[index].count());
    std::memcpy(dst, m_data[index].data() + offset * elem, count * elem);
  }

 private:
  void read_meta(const tfproto::SavedTensorSliceMeta& meta) {
    for (const auto& t : meta.tensor()) {
      const TfType type = tf_type(t.type());
      if (type.kind != TfKind::number)
        fail(m_path, "tensor " + t.name() + ": dtype " + type.name + " is not one wavg merges");
      if (t.shape().unknown_rank()) fail(m_path, "tensor " + t.name() + ": its shape has an unknown rank");
      Shape shape;
      for (const auto& d : t.shape().dim()) {
        if (d.size() < 0) fail(m_path, "tensor " + t.name() + ": a dimension is negative");
        shape.push_back(static_cast<std::uint64_t>(d.size()));
      }
      std::uint64_t bytes = 0;
      if (!checked_count(shape, dtype_size(type.dtype), bytes))
        fail(m_path, "tensor " + t.name() + ": shape " + shape_string(shape) + " overflows");
      if (t.slice_size() != 1 || !whole(t.slice(0), t.shape().dim_size()))
        fail(m_path, "tensor " + t.name() + " is a partitioned variable (saved in " + std::to_string(t.slice_size()) +
                         " slices), which wavg does not read");
      if (!m_index.emplace(t.name(), m_tensors.size()).second) fail(m_path, "tensor " + t.name() + " is listed twice");
      m_tensors.push_back({t.name(), type.dtype, shape});
    }
    m_data.resize(m_tensors.size());
    m_stored.assign(m_tensors.size(), false);
  }

  void add_slice(const tfproto::SavedSlice& s) {
    const auto it = m_index.find(s.name());
    if (it == m_index.end())
      fail(m_path, "tensor " + s.name() + ": an entry holds values the table of contents does not list");
    const TensorInfo& t = m_tensors[it->second];
    if (!whole(s.slice(), static_cast<int>(t.shape.size())))
      fail(m_path, "tensor " + t.name + ": an entry holds a part of it, which wavg does not read");
    if (m_stored[it->second]) fail(m_path, "tensor " + t.name + ": its values are stored twice");
    m_stored[it->second] = true;
    if (!decode(s.data(), t.dtype, t.count(), m_data[it->second]))
      fail(m_path, "tensor " + t.name + ": its stored values do not fill its shape " + shape_string(t.shape));
  }

  std::map<std::string, std::size_t> m_index;
  std::vector<std::vector<unsigned char>> m_data;
  std::vector<bool> m_stored;
};

}  // namespace

bool has_table_magic(std::span<const unsigned char> bytes) {
  std::uint64_t magic = 0;
  if (bytes.size() < 8) return false;
  std::memcpy(&magic, bytes.data() + bytes.size() - 8, 8);
  return magic == 0xdb4775248b80fb57ull;  // LevelDB's table magic, little-endian
}

bool looks_like_tensorflow_v1(const std::string& path) {
  if (path.size() >= 6 && path.compare(path.size() - 6, 6, ".index") == 0) return false;
  const SniffInput input(path);
  return has_table_magic(input.bytes());
}

std::unique_ptr<Reader> open_tensorflow(const std::string& path) {
  if (!is_tensorflow_prefix(path) && looks_like_tensorflow_v1(path)) return std::make_unique<TfV1Reader>(path);
  return std::make_unique<TensorflowReader>(path);
}

}  // namespace wavg
