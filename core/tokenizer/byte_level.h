#pragma once
// GPT-2's bytes_to_unicode: a reversible map from the 256 byte values to printable code
// points, so byte-level BPE vocabularies can be stored as text ("Ġ" is the space byte).
#include <array>
#include <string>
#include <string_view>

namespace wl::byte_level {

// The UTF-8 string of the code point byte `b` maps to.
const std::array<std::string, 256>& byteToUnicode();
// Maps every byte of `bytes` through byteToUnicode().
std::string encode(std::string_view bytes);
// Reverses encode(); returns false (leaving `out` partly filled) when `text` holds a code
// point outside the map, e.g. an added token stored as raw text.
bool decode(std::string_view text, std::string& out);

// The byte of a byte-fallback piece "<0xNN>" (SentencePiece, llama2.c, HF byte_fallback),
// or -1 for any other piece.
int byteFallbackValue(std::string_view piece);

}  // namespace wl::byte_level
