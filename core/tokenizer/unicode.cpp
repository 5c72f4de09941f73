#include "tokenizer/unicode.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "tokenizer/utf8.h"

namespace wl::unicode {
namespace {

struct CodeRange { char32_t first, last; };
struct CombiningClass { char32_t cp; int ccc; };
struct Decomposition { char32_t cp; int offset, length; };
struct Composition { char32_t first, second, composite; };

#include "tokenizer/unicode_tables.inc"

template <size_t N>
bool inRanges(const CodeRange (&table)[N], char32_t cp) {
    const CodeRange* end = table + N;
    const CodeRange* it = std::upper_bound(table, end, cp, [](char32_t c, const CodeRange& r) { return c < r.first; });
    return it != table && cp <= (it - 1)->last;
}

// Hangul syllables decompose and compose algorithmically (Unicode 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr int kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

void decompose(char32_t cp, std::u32string& out) {
    if (cp >= kSBase && cp < kSBase + kSCount) {
        const int s = static_cast<int>(cp - kSBase);
        out += kLBase + s / kNCount;
        out += kVBase + (s % kNCount) / kTCount;
        if (s % kTCount) out += kTBase + s % kTCount;
        return;
    }
    const Decomposition* end = std::end(kDecompositions);
    const Decomposition* it = std::lower_bound(std::begin(kDecompositions), end, cp,
                                               [](const Decomposition& d, char32_t c) { return d.cp < c; });
    if (it != end && it->cp == cp) {
        out.append(kDecompositionData + it->offset, it->length);
    } else {
        out += cp;
    }
}

char32_t compose(char32_t a, char32_t b) {
    if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
        return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
    if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount)
        return a + (b - kTBase);
    const Composition* end = std::end(kCompositions);
    const Composition* it = std::lower_bound(std::begin(kCompositions), end, std::make_pair(a, b),
                                             [](const Composition& c, const std::pair<char32_t, char32_t>& k) {
                                                 return c.first != k.first ? c.first < k.first : c.second < k.second;
                                             });
    if (it != end && it->first == a && it->second == b) return it->composite;
    return 0;
}

}  // namespace

bool isLetter(char32_t cp) { return inRanges(kLetterRanges, cp); }
bool isNumber(char32_t cp) { return inRanges(kNumberRanges, cp); }
bool isWhiteSpace(char32_t cp) { return inRanges(kWhiteSpaceRanges, cp); }

int combiningClass(char32_t cp) {
    const CombiningClass* end = std::end(kCombiningClasses);
    const CombiningClass* it = std::lower_bound(std::begin(kCombiningClasses), end, cp,
                                                [](const CombiningClass& c, char32_t k) { return c.cp < k; });
    return it != end && it->cp == cp ? it->ccc : 0;
}

std::u32string nfc(const std::u32string& text) {
    // Nothing below U+0300 decomposes or combines: most text takes this path.
    if (std::all_of(text.begin(), text.end(), [](char32_t c) { return c < 0x300; })) return text;
    std::u32string d;
    d.reserve(text.size() + 8);
    for (char32_t cp : text) decompose(cp, d);
    // Canonical ordering: stable sort each run of non-starters by combining class.
    for (size_t i = 0; i < d.size();) {
        if (combiningClass(d[i]) == 0) { ++i; continue; }
        size_t j = i;
        while (j < d.size() && combiningClass(d[j]) != 0) ++j;
        std::stable_sort(d.begin() + i, d.begin() + j,
                         [](char32_t a, char32_t b) { return combiningClass(a) < combiningClass(b); });
        i = j;
    }
    // Canonical composition.
    std::u32string out;
    out.reserve(d.size());
    size_t starter = std::u32string::npos;
    int last_ccc = -1;
    for (char32_t cp : d) {
        const int ccc = combiningClass(cp);
        if (starter != std::u32string::npos) {
            const bool blocked = last_ccc != -1 && (last_ccc == 0 || last_ccc >= ccc);
            if (!blocked) {
                const char32_t c = compose(out[starter], cp);
                if (c) { out[starter] = c; continue; }
            }
        }
        if (ccc == 0) { starter = out.size(); last_ccc = -1; }
        else last_ccc = ccc;
        out += cp;
    }
    return out;
}

std::string nfc(const std::string& utf8_text) {
    bool ascii_below = true;
    for (unsigned char c : utf8_text) {
        if (c >= 0xCC) { ascii_below = false; break; }  // U+0300 starts with byte 0xCC
    }
    if (ascii_below && utf8::isValid(utf8_text)) return utf8_text;
    const auto cps = utf8::decode(utf8_text);
    return utf8::encode(std::u32string_view(nfc(std::u32string(cps.begin(), cps.end()))));
}

}  // namespace wl::unicode
