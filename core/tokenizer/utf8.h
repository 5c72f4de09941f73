#pragma once
// UTF-8 helpers shared by the tokenizers and the calibration loaders.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wl::utf8 {

// Length in bytes of the UTF-8 sequence starting with `lead` (1 for invalid lead bytes, so
// callers always make progress).
int sequenceLength(unsigned char lead);

// Decodes the code point at text[pos] and advances pos. Invalid sequences yield U+FFFD and
// advance by one byte.
char32_t next(std::string_view text, size_t& pos);

void append(std::string& out, char32_t cp);
std::string encode(char32_t cp);

std::vector<char32_t> decode(std::string_view text);
std::string encode(const std::u32string_view& cps);

// Byte offset of the first invalid UTF-8 byte (overlong forms, surrogates and code points
// above U+10FFFF are invalid), or std::string_view::npos when the text is valid.
size_t firstInvalid(std::string_view text);
inline bool isValid(std::string_view text) { return firstInvalid(text) == std::string_view::npos; }

}  // namespace wl::utf8
