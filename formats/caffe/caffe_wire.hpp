#pragma once
// The few pieces of protobuf's wire format the Caffe codec walks by hand (layout in caffe.hpp): one field's extent,
// read through the project's ByteCursor and its one strict varint decoder (formats/common/byte_cursor.hpp), and
// writing a varint.

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/byte_cursor.hpp"

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

// Reads the field at the cursor, whose end is the message's, and moves the cursor past it; returns false when the
// field is broken, runs past the end, has field number 0 or a wire type other than 0, 1, 2 and 5 (groups included).
bool next_field(ByteCursor& c, Field& f);

// Returns how many bytes the varint encoding of `v` takes.
std::uint64_t varint_size(std::uint64_t v);

// Appends the varint encoding of `v`.
void put_varint(std::string& out, std::uint64_t v);

}  // namespace wavg::caffe_wire
