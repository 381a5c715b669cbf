#pragma once
// The few pieces of protobuf's wire format the Caffe codec walks by hand (layout in caffe.hpp): reading a varint
// and one field's extent, and writing a varint. Kept apart so that a shared byte cursor can replace them in one place.

#include <cstddef>
#include <cstdint>
#include <string>

namespace wavg::caffe_wire {

// One field of a message: its number and wire type, where its tag starts, where its payload starts (after the
// length for type 2) and where the field ends; for type 0 its value.
struct Field {
  std::uint64_t number = 0;
  unsigned wire = 0;
  std::uint64_t tag_at = 0;
  std::uint64_t at = 0;
  std::uint64_t end = 0;
  std::uint64_t value = 0;
};

// Reads a varint at `at` (at most 10 bytes, none past `end`), or returns false.
bool read_varint(const unsigned char* p, std::uint64_t end, std::uint64_t& at, std::uint64_t& v);

// Reads the field at `at` of a message ending at `end` and moves `at` past it; returns false when the field is
// broken, runs past `end`, has field number 0 or a wire type other than 0, 1, 2 and 5 (groups included).
bool next_field(const unsigned char* p, std::uint64_t end, std::uint64_t& at, Field& f);

// Returns how many bytes the varint encoding of `v` takes.
std::uint64_t varint_size(std::uint64_t v);

// Appends the varint encoding of `v`.
void put_varint(std::string& out, std::uint64_t v);

}  // namespace wavg::caffe_wire
