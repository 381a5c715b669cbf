// Protobuf wire-format pieces for the Caffe codec (see caffe_wire.hpp).

#include "caffe/caffe_wire.hpp"

namespace wavg::caffe_wire {

bool next_field(ByteCursor& c, Field& f) {
  f = Field{};
  f.tag_at = c.at();
  std::uint64_t tag = 0, length = 0;
  if (!c.varint(tag) || tag >> 3 == 0) return false;
  f.number = tag >> 3;
  f.wire = static_cast<unsigned>(tag & 7);
  switch (f.wire) {
    case 0:
      if (!c.varint(f.value)) return false;
      break;
    case 1: length = 8; break;
    case 5: length = 4; break;
    case 2:
      if (!c.varint(length)) return false;
      break;
    default: return false;
  }
  if (length > c.left()) return false;
  f.at = c.at();
  c.skip(length);
  f.end = c.at();
  return true;
}

std::uint64_t varint_size(std::uint64_t v) {
  std::uint64_t n = 1;
  for (; v > 0x7f; v >>= 7) ++n;
  return n;
}

void put_varint(std::string& out, std::uint64_t v) {
  for (; v > 0x7f; v >>= 7) out += static_cast<char>((v & 0x7f) | 0x80);
  out += static_cast<char>(v);
}

}  // namespace wavg::caffe_wire
