#pragma once
// The pickle opcodes wavg writes (protocol 2: what torch.load(weights_only=True) and pickle.load accept): the
// .pt writer's state_dict pickle and a DCP output's .metadata are made of these.

#include <cstdint>
#include <string>
#include <vector>

namespace wavg::pytorch {

// Appends BINUNICODE `s`.
inline void pickle_string(std::string& out, const std::string& s) {
  out += 'X';
  for (int i = 0; i < 4; ++i) out += static_cast<char>((s.size() >> (8 * i)) & 0xff);
  out += s;
}
// Appends GLOBAL module.name.
inline void pickle_global(std::string& out, const std::string& module, const std::string& name) {
  out += 'c' + module + '\n' + name + '\n';
}
// Appends a non-negative integer: BININT below 2^31, else a LONG1 of 8 bytes (9 from 2^63: a zero byte more keeps
// it positive), which the restricted unpickler reads as an integer up to 2^63 (a DCP storage's offset).
inline void pickle_uint(std::string& out, std::uint64_t v) {
  if (v < 0x80000000u) {
    out += 'J';
    for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
    return;
  }
  const bool top = v >> 63;
  out += top ? "\x8a\x09" : "\x8a\x08";
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  if (top) out += '\0';
}
// Appends a tuple of non-negative integers.
inline void pickle_tuple(std::string& out, const std::vector<std::uint64_t>& values) {
  out += '(';
  for (const auto v : values) pickle_uint(out, v);
  out += 't';
}
// Appends NEWTRUE or NEWFALSE.
inline void pickle_bool(std::string& out, bool b) { out += b ? '\x88' : '\x89'; }

}  // namespace wavg::pytorch
