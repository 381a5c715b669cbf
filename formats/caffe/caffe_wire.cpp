// Protobuf wire-format pieces for the Caffe codec (see caffe_wire.hpp).

#include "caffe/caffe_wire.hpp"

namespace wavg::caffe_wire {

bool read_varint(const unsigned char* p, std::uint64_t end, std::uint64_t& at, std::uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 70 && at < end; shift += 7) {
    const unsigned char b = p[at++];
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return shift < 63 || b <= 1;
  }
  return false;
}

bool next_field(const unsigned char* p, std::uint64_t end, std::uint64_t& at, Field& f) {
  f = Field{};
  f.tag_at = at;
  std::uint64_t tag = 0;
  if (!read_varint(p, end, at, tag) || tag >> 3 == 0) return false;
  f.number = tag >> 3;
  f.wire = static_cast<unsigned>(tag & 7);
  switch (f.wire) {
    case 0:
      if (!read_varint(p, end, at, f.value)) return false;
      f.at = at;
      break;
    case 1:
    case 5: {
      const std::uint64_t n = f.wire == 1 ? 8 : 4;
      if (end - at < n) return false;
      f.at = at;
      at += n;
      break;
    }
    case 2: {
      std::uint64_t length = 0;
      if (!read_varint(p, end, at, length) || length > end - at) return false;
      f.at = at;
      at += length;
      break;
    }
    default: return false;
  }
  f.end = at;
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
