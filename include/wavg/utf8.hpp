#pragma once
// UTF-8 well-formedness (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), for the readers that
// take text from files (the wavg JSON tokenizer, the safetensors header).

#include <cstddef>

namespace wavg {

// Returns the length (2 to 4) of the well-formed multi-byte sequence at `s` (at most `n` bytes), or 0.
std::size_t utf8_sequence_length(const unsigned char* s, std::size_t n);
// Tells whether the `n` bytes at `s` are well-formed UTF-8.
bool valid_utf8(const unsigned char* s, std::size_t n);

}  // namespace wavg
