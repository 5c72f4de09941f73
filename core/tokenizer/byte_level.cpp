#include "tokenizer/byte_level.h"

#include <unordered_map>

#include "tokenizer/utf8.h"

namespace wl::byte_level {
namespace {

struct Tables {
    std::array<std::string, 256> to_unicode;
    std::unordered_map<char32_t, unsigned char> to_byte;
    Tables() {
        // Printable Latin-1 bytes map to themselves; the rest to 256, 257, ... in byte order.
        int next = 256;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            const char32_t cp = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(next++);
            to_unicode[b] = utf8::encode(cp);
            to_byte[cp] = static_cast<unsigned char>(b);
        }
    }
};

const Tables& tables() {
    static const Tables t;
    return t;
}

}  // namespace

const std::array<std::string, 256>& byteToUnicode() { return tables().to_unicode; }

std::string encode(std::string_view bytes) {
    const auto& map = tables().to_unicode;
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char b : bytes) out += map[b];
    return out;
}

bool decode(std::string_view text, std::string& out) {
    const auto& map = tables().to_byte;
    size_t pos = 0;
    while (pos < text.size()) {
        const char32_t cp = utf8::next(text, pos);
        auto it = map.find(cp);
        if (it == map.end()) return false;
        out += static_cast<char>(it->second);
    }
    return true;
}

int byteFallbackValue(std::string_view piece) {
    if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return -1;
    int value = 0;
    for (size_t i = 3; i < 5; ++i) {
        const char c = piece[i];
        int digit;
        if (c >= '0' && c <= '9') digit = c - '0';
        else if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
        else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
        else return -1;
        value = value * 16 + digit;
    }
    return value;
}

}  // namespace wl::byte_level
