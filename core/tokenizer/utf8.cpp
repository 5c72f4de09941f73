#include "tokenizer/utf8.h"

namespace wl::utf8 {

int sequenceLength(unsigned char lead) {
    if (lead < 0x80) return 1;
    if ((lead & 0xE0) == 0xC0) return 2;
    if ((lead & 0xF0) == 0xE0) return 3;
    if ((lead & 0xF8) == 0xF0) return 4;
    return 1;
}

// Length of the valid sequence at text[pos], or 0 if it is invalid.
static int validLength(std::string_view text, size_t pos) {
    const auto b = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char c = b(pos);
    if (c < 0x80) return 1;
    int len = 0;
    char32_t cp = 0, min = 0;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if (pos + len > text.size()) return 0;
    for (int i = 1; i < len; ++i) {
        if ((b(pos + i) & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (b(pos + i) & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

char32_t next(std::string_view text, size_t& pos) {
    const int len = validLength(text, pos);
    if (len == 0) { ++pos; return 0xFFFD; }
    const unsigned char c = static_cast<unsigned char>(text[pos]);
    char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (int i = 1; i < len; ++i) cp = (cp << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
    pos += len;
    return cp;
}

void append(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

std::string encode(char32_t cp) {
    std::string s;
    append(s, cp);
    return s;
}

std::vector<char32_t> decode(std::string_view text) {
    std::vector<char32_t> cps;
    cps.reserve(text.size());
    size_t pos = 0;
    while (pos < text.size()) cps.push_back(next(text, pos));
    return cps;
}

std::string encode(const std::u32string_view& cps) {
    std::string s;
    s.reserve(cps.size());
    for (char32_t cp : cps) append(s, cp);
    return s;
}

size_t firstInvalid(std::string_view text) {
    size_t pos = 0;
    while (pos < text.size()) {
        const int len = validLength(text, pos);
        if (len == 0) return pos;
        pos += len;
    }
    return std::string_view::npos;
}

}  // namespace wl::utf8
