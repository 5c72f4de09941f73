#include "tokenizer/pretokenizer.h"

#include "tokenizer/unicode.h"
#include "tokenizer/utf8.h"

namespace wl {
namespace {

const std::string kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const std::string kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

enum Class : unsigned char { kLetter, kNumber, kSpace, kOther };

struct Text {
    std::vector<char32_t> cp;
    std::vector<unsigned char> cls;
    std::vector<size_t> offset;  // byte offset of each code point; offset[n] = text size
    size_t n = 0;
    bool is(size_t i, Class c) const { return i < n && cls[i] == c; }
    bool isNewline(size_t i) const { return i < n && (cp[i] == '\r' || cp[i] == '\n'); }
    size_t run(size_t i, Class c, size_t max = SIZE_MAX) const {
        size_t j = i;
        while (j < n && cls[j] == c && j - i < max) ++j;
        return j - i;
    }
};

// Case-insensitive match of one contraction letter; 'ſ' (U+017F) folds to 's' as in
// Oniguruma's and Python's Unicode case folding.
bool foldEq(char32_t c, char lower) {
    if (c == static_cast<char32_t>(lower) || c == static_cast<char32_t>(lower - 32)) return true;
    return lower == 's' && c == 0x17F;
}

// 's|'t|'re|'ve|'m|'ll|'d, optionally case-insensitive. Returns the match length.
size_t contraction(const Text& t, size_t i, bool ignore_case) {
    if (i + 1 >= t.n || t.cp[i] != '\'') return 0;
    const auto eq = [&](size_t k, char c) {
        if (k >= t.n) return false;
        return ignore_case ? foldEq(t.cp[k], c) : t.cp[k] == static_cast<char32_t>(c);
    };
    for (char c : {'s', 't'}) if (eq(i + 1, c)) return 2;
    if (eq(i + 1, 'r') && eq(i + 2, 'e')) return 3;
    if (eq(i + 1, 'v') && eq(i + 2, 'e')) return 3;
    if (eq(i + 1, 'm')) return 2;
    if (eq(i + 1, 'l') && eq(i + 2, 'l')) return 3;
    if (eq(i + 1, 'd')) return 2;
    return 0;
}

// \s+(?!\S) then \s+ : a whitespace run, leaving its last character to prefix the next
// word when one follows.
size_t whitespace(const Text& t, size_t i) {
    const size_t len = t.run(i, kSpace);
    if (len == 0) return 0;
    if (i + len == t.n || len == 1) return len;  // (?!\S) holds at the end; else \s+ takes it
    return len - 1;
}

size_t matchGpt2(const Text& t, size_t i) {
    if (size_t m = contraction(t, i, false)) return m;
    const bool space = t.cp[i] == ' ';
    for (Class c : {kLetter, kNumber, kOther}) {
        if (space && t.is(i + 1, c)) return 1 + t.run(i + 1, c);
        if (t.is(i, c)) return t.run(i, c);
    }
    return whitespace(t, i);
}

size_t matchQwen(const Text& t, size_t i, size_t max_digits) {
    if (size_t m = contraction(t, i, true)) return m;
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (!t.is(i, kLetter) && !t.is(i, kNumber) && !t.isNewline(i) && t.is(i + 1, kLetter)) return 1 + t.run(i + 1, kLetter);
    if (t.is(i, kLetter)) return t.run(i, kLetter);
    // \p{N} or \p{N}{1,3}
    if (t.is(i, kNumber)) return t.run(i, kNumber, max_digits);
    // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
    size_t j = i;
    if (t.cp[i] == ' ' && t.is(i + 1, kOther)) j = i + 1;
    if (t.is(j, kOther)) {
        j += t.run(j, kOther);
        while (t.isNewline(j)) ++j;
        return j - i;
    }
    // \s*[\r\n]+ : up to and including the last newline of the whitespace run.
    const size_t len = t.run(i, kSpace);
    for (size_t k = i + len; k-- > i;) {
        if (t.isNewline(k)) return k + 1 - i;
    }
    return whitespace(t, i);
}

}  // namespace

bool splitPatternFromRegex(const std::string& regex, SplitPattern& out) {
    if (regex == kGpt2) { out = SplitPattern::Gpt2; return true; }
    if (regex == kQwen2) { out = SplitPattern::Qwen2; return true; }
    if (regex == kLlama3) { out = SplitPattern::Llama3; return true; }
    return false;
}

const std::string& splitPatternRegex(SplitPattern pattern) {
    switch (pattern) {
        case SplitPattern::Gpt2: return kGpt2;
        case SplitPattern::Qwen2: return kQwen2;
        case SplitPattern::Llama3: return kLlama3;
    }
    return kGpt2;
}

std::vector<std::pair<size_t, size_t>> preTokenize(std::string_view text, SplitPattern pattern) {
    Text t;
    t.cp.reserve(text.size());
    t.offset.reserve(text.size() + 1);
    size_t pos = 0;
    while (pos < text.size()) {
        t.offset.push_back(pos);
        t.cp.push_back(utf8::next(text, pos));
    }
    t.offset.push_back(text.size());
    t.n = t.cp.size();
    t.cls.resize(t.n);
    for (size_t i = 0; i < t.n; ++i) {
        const char32_t c = t.cp[i];
        t.cls[i] = unicode::isLetter(c) ? kLetter : unicode::isNumber(c) ? kNumber
                                        : unicode::isWhiteSpace(c) ? kSpace : kOther;
    }
    std::vector<std::pair<size_t, size_t>> pieces;
    for (size_t i = 0; i < t.n;) {
        size_t len = pattern == SplitPattern::Gpt2 ? matchGpt2(t, i)
                     : matchQwen(t, i, pattern == SplitPattern::Llama3 ? 3 : 1);
        if (len == 0) len = 1;  // cannot happen: every character matches some alternative
        pieces.emplace_back(t.offset[i], t.offset[i + len]);
        i += len;
    }
    return pieces;
}

}  // namespace wl
